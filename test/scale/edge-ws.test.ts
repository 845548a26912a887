// Browser and WebSocket agents behind the shipped Kamailio edge (deploy/kamailio/kamailio.cfg): a SIP
// over WebSocket client (test/support/ws-sip.ts) registers through the edge's WS listener (Path back to
// its connection, X-Openvoice-Source ws:<ip>:<port>), and calls for it from either node come to the
// edge, which relays them over that connection: queue calls landing on node A and on node B, a flow's
// `connect` to its extension, a groupcall. Each node offers the WebRTC profile (DTLS-SRTP + ICE) from
// its own rtpengine; the agent's media stack is a third rtpengine (testkit/srtp-far-end.ts), and
// tones are heard both ways.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import request from 'supertest';
import WebSocket from 'ws';
import { agentsRepo } from '../../core/repos/agents';
import { flowsRepo } from '../../core/repos/flows';
import { queuesRepo } from '../../core/repos/queues';
import { tagsRepo } from '../../core/repos/tags';
import { trunksRepo } from '../../core/repos/trunks';
import { parseActions } from '../../core/flow';
import { createFixture, type Fixture } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { Rtpengine } from '../../testkit/rtpengine';
import { selfSignedCert, type TestCert } from '../../testkit/tls-cert';
import { SipPeer } from '../support/sip-peer';
import { SrtpFarEnd, plainSdp } from '../../testkit/srtp-far-end';
import { WsSipPhone, type WsMessage } from '../support/ws-sip';
import { RtpParty } from '../../testkit/conference/party';
import { createExtension, until } from '../../testkit/media-app/harness';
import { Cluster, type ClusterNode } from '../../testkit/scale/cluster';
import { Edge } from '../../testkit/scale/edge';
import { numberWithFlow } from '../../testkit/scale/fixtures';

describe('scale: WebSocket agents registered through the Kamailio edge', function () {
  this.timeout(60_000);
  let c: Cluster;
  let engines: Rtpengine[] = [];
  let farRelay: Rtpengine;
  let f: Fixture;
  let agent: Awaited<ReturnType<typeof createExtension>>;
  let phone: WsSipPhone | null = null;
  let cert: TestCert;
  const closers: (() => unknown)[] = [];

  before(async function () {
    this.timeout(120_000);
    await truncateAll();
    cert = selfSignedCert();
    engines = await Promise.all([Rtpengine.create(), Rtpengine.create(), Rtpengine.create()]);
    farRelay = engines[2]!;
    c = await Cluster.start({ nodeEnv: [{ RTPENGINE_NG: engines[0]!.ng }, { RTPENGINE_NG: engines[1]!.ng }], edge: { ws: true, wss: cert, wsKeepaliveSec: 1 } });
    f = await createFixture(c.apis[0]!.ctx);
    await trunksRepo(c.db).create(f.customer.id, `ew${randomBytes(4).toString('hex')}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    agent = await createExtension(f.customer.id);
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });
  after(async () => {
    await phone?.close();
    await c?.close();
    await Promise.all(engines.map((e) => e.dispose()));
    if (cert) fs.rmSync(cert.dir, { recursive: true, force: true });
  });

  const diag = (node?: ClusterNode) => `\nEDGE ${c.edge.log.slice(-3000)}${node ? `\nNODE ${node.out().slice(-2000)}` : ''}`;

  /** The agent's phone, registered through the edge's WebSocket listener. */
  async function registeredPhone(): Promise<WsSipPhone> {
    if (phone) return phone;
    const p = await WsSipPhone.connect(c.edge.wsUrl);
    const res = await p.register(agent.ext.username, agent.domain, agent.password);
    expect(res.status, res.raw + diag()).to.equal(200);
    phone = p;
    return p;
  }

  /** The node's rtpengine offered this SDP: its media port is in that engine's range. */
  function offeredBy(sdp: string): number {
    const port = Number(/^m=audio (\d+)/m.exec(sdp)?.[1]);
    return engines.findIndex((e) => port >= e.portRange[0] && port <= e.portRange[1]);
  }

  /** The agent answers the next INVITE (180, then 200 with the DTLS-SRTP answer of its media stack) with a tone. */
  async function agentAnswers(p: WsSipPhone, tone: RtpParty): Promise<WsMessage> {
    const invite = await p.nextRequest('INVITE', 20_000);
    const tag = randomBytes(4).toString('hex');
    p.respond(invite, 180, 'Ringing', '', tag);
    const far = new SrtpFarEnd({ host: '127.0.0.1', port: farRelay.ngPort });
    closers.push(() => far.close());
    const ans = await far.answerOffer(invite.body, tone.port);
    p.respond(invite, 200, 'OK', ans.sdp, tag);
    tone.sendTo({ address: ans.rtp.host, port: ans.rtp.port });
    await p.nextRequest('ACK', 5000);
    return invite;
  }

  async function tones(): Promise<[RtpParty, RtpParty]> {
    const [a, b] = await Promise.all([RtpParty.open(440), RtpParty.open(660)]);
    closers.push(
      () => a.close(),
      () => b.close(),
    );
    return [a, b];
  }

  /** A second of each tone heard on the other side. */
  async function heardBothWays(caller: RtpParty, agentSide: RtpParty, what: string): Promise<void> {
    const ok = () => agentSide.presence(440, Date.now() - 1000) > 0.7 && caller.presence(660, Date.now() - 1000) > 0.7 && agentSide.framesBetween(Date.now() - 1000) > 20;
    await until(ok, 10_000, what).catch(() => {
      const since = Date.now() - 1000;
      throw new Error(`${what}: the agent hears the caller ${agentSide.presence(440, since)} (${agentSide.framesBetween(since)} frames), the caller hears the agent ${caller.presence(660, since)}`);
    });
  }

  /** The INVITE came through the edge from a node: both edge sockets (UDP towards the node, WS towards the phone) in its Record-Route. */
  function expectThroughEdge(invite: WsMessage): void {
    const rr = invite.headers
      .filter(([k]) => k === 'record-route')
      .map(([, v]) => v)
      .join(', ');
    expect(rr, invite.raw)
      .to.include(`127.0.0.1:${c.edge.port}`)
      .and.match(new RegExp(`127\\.0\\.0\\.1:${c.edge.wsPort};transport=ws[;>]`, 'i'));
    expect(invite.body, 'the WebRTC profile')
      .to.match(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF /m)
      .and.match(/^a=fingerprint:/m);
  }

  /** Calls `number` straight at `node` (the call lives there) with a 440 Hz tone; the agent answers with 660 Hz. */
  async function callThroughNode(node: ClusterNode, number: string, what: string, agentPhone?: WsSipPhone): Promise<WsMessage> {
    const p = agentPhone ?? (await registeredPhone());
    const [a, b] = await tones();
    const caller = await SipPeer.open();
    closers.push(() => caller.close());
    const answered = agentAnswers(p, b);
    const call = await caller.invite(`${number}@127.0.0.1`, node.sipPort, plainSdp(a.port), '+15550001111');
    a.sendTo({ address: '127.0.0.1', port: Number(/^m=audio (\d+)/m.exec(call.remoteSdp)![1]) });
    const invite = await answered;
    expectThroughEdge(invite);
    expect(offeredBy(invite.body), `the offer comes from ${node.id}'s rtpengine`).to.equal(c.nodes.indexOf(node));
    await heardBothWays(a, b, what);
    expect(await call.bye()).to.equal(200);
    // the node hangs up the agent's leg: its BYE comes through the edge too
    const bye = await p.nextRequest('BYE', 10_000);
    p.respond(bye, 200, 'OK');
    return invite;
  }

  it('a WS client registers through the edge: Path back to its connection, its real source in X-Openvoice-Source, pinged by the edge', async () => {
    const p = await registeredPhone();
    const [binding] = await until(
      async () => {
        const raw = await c.redis.hgetall(`${c.prefix}reg:${agent.ext.username}@${agent.domain}`.toLowerCase());
        return Object.values(raw).map((v) => JSON.parse(v));
      },
      5000,
      'binding',
    );
    expect(binding.source, JSON.stringify(binding)).to.include({ protocol: 'ws', address: '127.0.0.1' });
    // the source is the phone's connection to the edge (the edge's own list of WebSocket connections)
    const dump = await c.edge.rpc('ws.dump');
    expect(dump, 'the edge holds the connection').to.include(`ws:127.0.0.1:${binding.source.port} -> ws:127.0.0.1:${c.edge.wsPort} (state: OPEN`).and.include('sub-protocol: sip');
    expect(binding.path[0], JSON.stringify(binding)).to.match(new RegExp(`^sip:127\\.0\\.0\\.1:${c.edge.port};.*received=`));
    // keepalive: the edge pings (WS_KEEPALIVE_SEC=1 here); `ws` answers with a pong
    const pinged = await new Promise<boolean>((r) => {
      const t = setTimeout(() => r(false), 4000);
      p.ws.once('ping', () => {
        clearTimeout(t);
        r(true);
      });
    });
    expect(pinged, 'a ping from the edge within 4 s').to.equal(true);
  });

  it('a handshake without the `sip` subprotocol, or to another path than a WebSocket upgrade, is refused', async () => {
    const err = await WsSipPhone.connect(c.edge.wsUrl, { protocols: ['chat'] }).then(
      (x) => {
        void x.close();
        return null;
      },
      (e: Error) => e,
    );
    expect(err, 'refused').to.be.instanceOf(Error);
    // the same port takes a `sip` handshake: the refusal was the subprotocol's
    const ok = await WsSipPhone.connect(c.edge.wsUrl);
    await ok.close();
    const plain = await fetch(`http://127.0.0.1:${c.edge.wsPort}/`).then(
      (r) => r.status,
      () => 0,
    );
    expect(plain, 'a plain HTTP GET').to.be.oneOf([0, 403, 404]);
  });

  it('a queue call landing on node A and one landing on node B both reach the WS agent through the edge; answered, audio both ways', async () => {
    const tag = await tagsRepo(c.db).create(f.customer.id, { name: `q${randomBytes(3).toString('hex')}` });
    if (tag === 'duplicate') throw new Error('tag');
    const ag = await agentsRepo(c.db).create({
      customer_id: f.customer.id,
      username: `ew${randomBytes(4).toString('hex')}@example.test`,
      permission: 16,
      status: 'available',
      tag_ids: [tag.id],
      addresses: [{ type: 'extension', target: agent.ext.extension }],
    });
    const hold = await flowsRepo(c.db).create({ customer_id: f.customer.id, actions: parseActions([{ type: 'sleep', option: { duration: 30_000 } }] as never) } as never);
    const queue = await queuesRepo(c.db).create(f.customer.id, { name: 'ws', tag_ids: [tag.id], wait_flow_id: hold.id, wait_timeout: 60_000 });
    const { number } = await numberWithFlow(c.db, '', [{ type: 'answer' }, { type: 'queue_join', option: { queue_id: queue.id } }, { type: 'hangup' }], f.customer.id);
    for (const node of c.nodes) {
      await c.db('agents').where({ id: ag.id }).update({ status: 'available' });
      await callThroughNode(node, number, `queue call on ${node.id}`);
      const qc = await until(
        async () => c.db('queuecalls').where({ queue_id: queue.id, service_agent_id: ag.id }).whereIn('status', ['service', 'done']).orderBy('tm_create', 'desc').first(),
        5000,
        'queuecall served by the agent',
      );
      const row = await c.db('calls').where({ id: qc.reference_id }).first();
      expect(row!.node_id, diag(node)).to.equal(node.id);
    }
  });

  it("a flow's connect to the agent's extension reaches it through the edge from either node", async () => {
    const { number } = await numberWithFlow(c.db, '', [{ type: 'connect', option: { destinations: [{ type: 'extension', target: agent.ext.extension }] } }], f.customer.id);
    for (const node of c.nodes) await callThroughNode(node, number, `connect on ${node.id}`);
  });

  it('a groupcall rings the WS agent through the edge; the answered leg echoes its audio', async () => {
    const p = await registeredPhone();
    const [, b] = await tones();
    const answered = agentAnswers(p, b);
    const g = await request(c.apis[1]!.app)
      .post('/v1.0/groupcalls')
      .set('Authorization', `Bearer ${f.token}`)
      .send({
        source: { type: 'tel', target: '+15550002222' },
        destinations: [{ type: 'extension', target: agent.ext.extension }],
        actions: [{ type: 'echo', option: { duration: 20_000 } }],
        ring_method: 'ring_all',
        answer_method: 'hangup_others',
      });
    expect(g.status, JSON.stringify(g.body)).to.equal(200);
    const invite = await answered;
    expectThroughEdge(invite);
    const node = await until(async () => (await c.db('groupcalls').where({ id: g.body.id }).whereNot({ node_id: '' }).first())?.node_id as string | undefined, 10_000, 'groupcall node');
    expect(offeredBy(invite.body), "the offer comes from the dialling node's rtpengine").to.equal(c.nodes.findIndex((n) => n.id === node));
    // the agent's own tone comes back: audio went both ways through the node
    await until(() => b.presence(660, Date.now() - 1000) > 0.7 && b.framesBetween(Date.now() - 1000) > 20, 10_000, 'the agent hears its echo');
    const hangup = await request(c.apis[0]!.app).post(`/v1.0/groupcalls/${g.body.id}/hangup`).set('Authorization', `Bearer ${f.token}`);
    expect(hangup.status, JSON.stringify(hangup.body)).to.be.oneOf([200, 202]);
    const bye = await p.nextRequest('BYE', 10_000);
    p.respond(bye, 200, 'OK');
  });

  it('the agent dials another WS extension: both INVITEs pass the edge (WS → node → WS), audio both ways', async () => {
    const other = await createExtension(f.customer.id);
    const callee = await WsSipPhone.connect(c.edge.wsUrl);
    closers.push(() => callee.close());
    expect((await callee.register(other.ext.username, other.domain, other.password)).status).to.equal(200);
    const p = await registeredPhone();
    const [a, b] = await tones();
    const answered = agentAnswers(callee, b);
    const farA = new SrtpFarEnd({ host: '127.0.0.1', port: farRelay.ngPort });
    closers.push(() => farA.close());
    const { res, bye } = await p.invite(`sip:${other.ext.extension}@${other.domain}`, await farA.offer('dtls', a.port), agent.password);
    expect(res.status, res.raw + diag()).to.equal(200);
    const to = await farA.answered(res.body);
    a.sendTo({ address: to.host, port: to.port });
    const invite = await answered;
    expectThroughEdge(invite);
    await heardBothWays(a, b, 'WS to WS through a node');
    // the caller's BYE follows the Record-Route through the edge; the node ends the callee's leg
    expect((await bye()).status).to.equal(200);
    const calleeBye = await callee.nextRequest('BYE', 10_000);
    callee.respond(calleeBye, 200, 'OK');
  });

  it('WSS: a client over TLS registers through the edge (source wss:) and is reached from a node over that connection', async () => {
    const secure = await createExtension(f.customer.id);
    const p = await WsSipPhone.connect(`wss://127.0.0.1:${c.edge.wssPort}`, { ca: cert.cert });
    closers.push(() => p.close());
    const reg = await p.register(secure.ext.username, secure.domain, secure.password);
    expect(reg.status, reg.raw + diag()).to.equal(200);
    const [binding] = await until(async () => Object.values(await c.redis.hgetall(`${c.prefix}reg:${secure.ext.username}@${secure.domain}`.toLowerCase())).map((v) => JSON.parse(v)), 5000, 'binding');
    expect(binding.source, JSON.stringify(binding)).to.include({ protocol: 'wss', address: '127.0.0.1' });
    const { number } = await numberWithFlow(c.db, '', [{ type: 'connect', option: { destinations: [{ type: 'extension', target: secure.ext.extension }] } }], f.customer.id);
    const invite = await callThroughNode(c.nodes[1]!, number, 'connect to a WSS agent', p);
    // sent over the client's TLS connection (its Via says WSS); Kamailio 5.6 names its WS socket in
    // that Via and the Record-Route (the Path's received URI says transport=ws for both), which the
    // client never uses: a WebSocket client sends everything over its one connection
    expect(invite.header('via'), 'the edge sent it over its WSS connection').to.match(/^SIP\/2\.0\/WSS\s+127\.0\.0\.1:\d+;/);
  });

  it('with WS_ORIGIN set, a browser handshake from another Origin is refused and one from that Origin accepted', async () => {
    const edge = await Edge.start({ nodes: c.nodes.map((n) => n.sipPort), ws: true, localLines: ['#!define WS_ORIGIN "https://phone.example.test"'] });
    try {
      const open = (origin: string) =>
        new Promise<number>((resolve) => {
          const ws = new WebSocket(edge.wsUrl, ['sip'], { origin });
          ws.once('open', () => {
            ws.close();
            resolve(101);
          });
          ws.once('unexpected-response', (_q, r) => {
            resolve(r.statusCode ?? 0);
            ws.terminate();
          });
          ws.once('error', () => resolve(0));
        });
      expect(await open('https://evil.example.test'), edge.log.slice(-1500)).to.equal(403);
      expect(await open('https://phone.example.test'), edge.log.slice(-1500)).to.equal(101);
    } finally {
      await edge.close();
    }
  });

  it('a call to a WS agent whose connection to the edge is gone fails at once, not after the INVITE timeout', async () => {
    const gone = await createExtension(f.customer.id);
    const p = await WsSipPhone.connect(c.edge.wsUrl);
    expect((await p.register(gone.ext.username, gone.domain, gone.password)).status).to.equal(200);
    await p.close();
    const { number } = await numberWithFlow(c.db, '', [{ type: 'connect', option: { destinations: [{ type: 'extension', target: gone.ext.extension }] } }, { type: 'hangup' }], f.customer.id);
    const caller = await SipPeer.open();
    closers.push(() => caller.close());
    const t0 = Date.now();
    const outcome = await caller.invite(`${number}@127.0.0.1`, c.nodes[0]!.sipPort, plainSdp(40000), '+15550001111').then(
      async (call) => {
        await call.byeReceived;
        return 'bye';
      },
      (e: Error & { status?: number }) => e.status,
    );
    expect(outcome, diag(c.nodes[0])).to.not.equal(undefined);
    expect(Date.now() - t0, 'ended within 5 s' + diag(c.nodes[0])).to.be.lessThan(5000);
  });
});
