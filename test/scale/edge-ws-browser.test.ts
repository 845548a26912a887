// The real browser phone (web/phone, JsSIP in Chromium) behind the Kamailio edge: control-api serves
// it with SIP_WSS_PUBLIC_URL pointing at the edge's WebSocket listener, an agent signs in (the agent
// credential on its extension) and registers through the edge, and a queue call landing on node A
// and one landing on node B both ring the page, which answers; the browser hears the caller's tone
// and the caller hears the browser's microphone (each node's own rtpengine, DTLS-SRTP + ICE).
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Permission } from '../../core/permissions';
import { flowsRepo } from '../../core/repos/flows';
import { queuesRepo } from '../../core/repos/queues';
import { tagsRepo } from '../../core/repos/tags';
import { trunksRepo } from '../../core/repos/trunks';
import { parseActions } from '../../core/flow';
import { buildWebApp } from '../../scripts/build-web';
import { createAgent, createFixture, type Fixture } from '../../testkit/api';
import { chromiumAvailable, type TestBrowser } from '../../testkit/browser';
import { truncateAll } from '../../testkit/db';
import { Rtpengine } from '../../testkit/rtpengine';
import { SipPeer } from '../support/sip-peer';
import { plainSdp } from '../../testkit/srtp-far-end';
import { RtpParty } from '../../testkit/conference/party';
import { createExtension, until } from '../../testkit/media-app/harness';
import { apiServer, audioStats, openPhone, phoneBrowser, signInAgent, toneWav, waitPhase, waitReg } from '../../testkit/webphone/harness';
import { Cluster } from '../../testkit/scale/cluster';
import { numberWithFlow } from '../../testkit/scale/fixtures';

describe('scale: the browser phone registered through the Kamailio edge', function () {
  this.timeout(60_000);
  let c: Cluster;
  let engines: Rtpengine[] = [];
  let api: Awaited<ReturnType<typeof apiServer>>;
  let b: TestBrowser;
  let f: Fixture;

  before(async function () {
    if (!chromiumAvailable()) this.skip();
    this.timeout(150_000);
    await truncateAll();
    await buildWebApp('phone');
    engines = await Promise.all([Rtpengine.create(), Rtpengine.create()]);
    c = await Cluster.start({ nodeEnv: [{ RTPENGINE_NG: engines[0]!.ng }, { RTPENGINE_NG: engines[1]!.ng }], edge: { ws: true } });
    // the multi-node mode: the phone's WebSocket URL is the edge's
    api = await apiServer(c.prefix, { SIP_WSS_PUBLIC_URL: c.edge.wsUrl, DATA_DIR: c.dataDir, RATE_LIMIT_SCALE: '0' });
    f = await createFixture(api.t.ctx);
    await trunksRepo(c.db).create(f.customer.id, `eb${randomBytes(4).toString('hex')}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    b = await phoneBrowser(toneWav(1000));
  });
  after(async () => {
    await b?.close();
    await api?.close();
    await c?.close();
    await Promise.all(engines.map((e) => e.dispose()));
  });

  it('an agent signed in in Chromium takes a queue call landing on node A and one landing on node B, audio both ways', async () => {
    const tag = await tagsRepo(c.db).create(f.customer.id, { name: `eb${randomBytes(3).toString('hex')}` });
    if (tag === 'duplicate') throw new Error('tag');
    const { ext } = await createExtension(f.customer.id);
    const extension = ext.extension;
    const a = await createAgent(api.t.ctx, f.customer.id, Permission.CustomerAgent);
    await api.t.ctx.repos.agents.update(a.agent.id, { addresses: [{ type: 'extension', target: extension }], tag_ids: [tag.id], status: 'available' });
    const hold = await flowsRepo(c.db).create({ customer_id: f.customer.id, actions: parseActions([{ type: 'sleep', option: { duration: 30_000 } }] as never) } as never);
    const queue = await queuesRepo(c.db).create(f.customer.id, { name: 'browser', tag_ids: [tag.id], wait_flow_id: hold.id, wait_timeout: 60_000 });
    const { number } = await numberWithFlow(c.db, '', [{ type: 'answer' }, { type: 'queue_join', option: { queue_id: queue.id } }, { type: 'hangup' }], f.customer.id);

    const page = await openPhone(b, api.base);
    try {
      await signInAgent(page, a.agent.username, a.password);
      await waitReg(page, 'registered');
      // registered through the edge: the node holds the binding with the edge's Path and a ws source
      const bindings = await until(
        async () => {
          const keys = await c.redis.keys(`${c.prefix}reg:${extension}@*`);
          return keys.length ? Object.values(await c.redis.hgetall(keys[0]!)).map((v) => JSON.parse(v)) : null;
        },
        5000,
        'binding',
      );
      expect(bindings[0].source.protocol).to.equal('ws');
      expect(bindings[0].path[0]).to.match(new RegExp(`^sip:127\\.0\\.0\\.1:${c.edge.port};`));

      for (const node of c.nodes) {
        await c.db('agents').where({ id: a.agent.id }).update({ status: 'available' });
        const party = await RtpParty.open(440);
        const caller = await SipPeer.open();
        try {
          const call = await caller.invite(`${number}@127.0.0.1`, node.sipPort, plainSdp(party.port), '+15550001111');
          party.sendTo({ address: '127.0.0.1', port: Number(/^m=audio (\d+)/m.exec(call.remoteSdp)![1]) });
          await waitPhase(page, 'incoming', 20_000);
          await page.click('#answer');
          await waitPhase(page, 'connected');
          const qc = await until(async () => c.db('queuecalls').where({ queue_id: queue.id, service_agent_id: a.agent.id, status: 'service' }).first(), 15_000, `queuecall in service on ${node.id}`);
          expect((await c.db('calls').where({ id: qc.reference_id }).first())!.node_id).to.equal(node.id);
          // the caller hears the browser's microphone (1 kHz) and the browser hears the caller
          await until(() => party.presence(1000, Date.now() - 1000) > 0.5, 10_000, `the caller hears the browser (node ${node.id})`).catch(() => {
            throw new Error(`the caller hears the browser: ${party.presence(1000, Date.now() - 1000)}\nEDGE ${c.edge.log.slice(-2000)}`);
          });
          let heard = await audioStats(page);
          await until(
            async () => {
              heard = await audioStats(page);
              return heard.inbound!.packetsReceived > 30 && heard.inbound!.audioLevel > 0.01;
            },
            8000,
            'the browser hears the caller',
          ).catch(() => undefined);
          expect(heard.inbound!.packetsReceived, 'the browser receives audio').to.be.greaterThan(30);
          expect(heard.inbound!.audioLevel, `the browser hears the caller ${JSON.stringify(heard)}`).to.be.greaterThan(0.01);
          expect(await call.bye()).to.equal(200);
          await waitPhase(page, 'ended', 10_000);
        } finally {
          party.close();
          caller.close();
        }
      }
    } finally {
      await page.close();
    }
  });
});
