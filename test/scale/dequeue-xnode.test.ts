// <Dial><Queue> across nodes (issue 54; docs/queues.md, docs/twilio.md): a caller waits in a queue on
// node 0; an agent's call on node 1 runs queue_dequeue (what <Dial><Queue> compiles to) and takes that
// caller: the two hear each other's tones (a tone of its own each, real RTP), the queuecall goes to
// service and then done, the caller's flow goes on after the agent hangs up (its Enqueue result
// bridged); with `url`, the whisper fetched by the caller's node. Two media-app nodes (testkit/scale/cluster.ts).
import { randomBytes, randomUUID } from 'node:crypto';
import dgram from 'node:dgram';
import { expect } from 'chai';
import { queuesRepo } from '../../core/repos/queues';
import { queuecallsRepo } from '../../core/repos/queuecalls';
import { nodeAliveKey } from '../../core/commands/contracts';
import { nodeSipKey } from '../../media-app/xnode/address';
import { trunksRepo } from '../../core/repos/trunks';
import { createFixture, type Fixture } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { killAllSipp, until } from '../../testkit/media-app/harness';
import { RtpParty } from '../../testkit/conference/party';
import { Cluster, type ClusterNode } from '../../testkit/scale/cluster';
import { numberWithFlow } from '../../testkit/scale/fixtures';
import { callOfParty, dialNode } from '../../testkit/scale/node-party';
import { TwimlServer } from '../../testkit/twiml/server';
import { expectOnSwitches, onBackend, XNODE_BACKENDS } from './backends';
import { callSid, toSid } from '../../core/twilio/sids';

const CALLER = 600;
const AGENT = 1500;
/** Share of 20 ms frames carrying a tone for "hears it" (RTP paced from a busy test process). */
const HEARS = 0.5;

/** Until `me` hears `freq` in the last 500 ms: the media path is up (rather than a settle sleep). */
const hearing = (me: RtpParty, freq: number) => until(() => me.presence(freq, Date.now() - 500) > HEARS, 10_000, `${me.freq} hearing ${freq}`);

/** A "node" on loopback that answers every INVITE 404 (a caller it does not hold), counting them by Call-ID. */
async function refusingNode(): Promise<{ port: number; invites: Set<string>; close(): void }> {
  const sock = dgram.createSocket('udp4');
  const invites = new Set<string>();
  sock.on('error', () => undefined);
  sock.on('message', (buf, from) => {
    const text = buf.toString();
    if (!text.startsWith('INVITE ')) return;
    const head = text.split('\r\n\r\n')[0]!.split('\r\n');
    const pick = (name: RegExp) => head.filter((l) => name.test(l));
    const [callId = '', cseq = '', to = ''] = [pick(/^(call-id|i)\s*:/i)[0], pick(/^cseq\s*:/i)[0], pick(/^(to|t)\s*:/i)[0]];
    invites.add(callId);
    const reply = ['SIP/2.0 404 Nothing To Dequeue', ...pick(/^(via|v)\s*:/i), ...pick(/^(from|f)\s*:/i), `${to};tag=${randomBytes(4).toString('hex')}`, callId, cseq, 'Content-Length: 0', '', ''];
    sock.send(reply.join('\r\n'), from.port, from.address);
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  return { port: sock.address().port, invites, close: () => sock.close() };
}

// on fsmrf (issue 55): the bridge's media, the caller on node 0's switch, the agent on node 1's
for (const backend of XNODE_BACKENDS)
  describe(onBackend('scale: <Dial><Queue> takes a caller waiting on another node', backend), function () {
    this.timeout(240_000);
    let c: Cluster;
    let f: Fixture;
    let app: TwimlServer;
    const parties: RtpParty[] = [];

    before(async () => {
      await truncateAll();
      app = await TwimlServer.start();
      c = await Cluster.start({ nodes: 2, env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }, mediaServer: backend });
      f = await createFixture(c.apis[0]!.ctx);
      await trunksRepo(c.db).create(f.customer.id, `dq${randomBytes(4).toString('hex')}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    });
    after(async () => {
      killAllSipp();
      parties.forEach((p) => p.close());
      await c?.close();
      await app?.close();
    });

    const dial = (number: string, node: ClusterNode, freq: number, hangUpAfterMs = 0) => dialNode(parties, number, node, freq, hangUpAfterMs);
    const callOf = (freq: number) => callOfParty(c.db, f.customer.id, freq);

    it('the agent on node 1 is bridged to the caller waiting on node 0; the agent hangs up, the caller goes on', async () => {
      const [n0, n1] = c.nodes as [ClusterNode, ClusterNode];
      const queue = await queuesRepo(c.db).create(f.customer.id, { name: 'xnode line', wait_timeout: 0 });
      // the caller: waits in the queue; once it leaves it (bridged, then the agent gone) a pause and hangup
      const { number: callerNumber } = await numberWithFlow(
        c.db,
        '',
        [{ type: 'answer' }, { type: 'queue_join', option: { queue_id: queue.id } }, { type: 'sleep', option: { duration: 500 } }, { type: 'hangup' }],
        f.customer.id,
      );
      const { number: agentNumber } = await numberWithFlow(
        c.db,
        '',
        [{ type: 'answer' }, { type: 'queue_dequeue', option: { queue_id: queue.id, timeout: 30_000 } }, { type: 'hangup' }],
        f.customer.id,
      );

      const a = await dial(callerNumber, n0, CALLER);
      const waiting = await until(
        async () => ((await c.db('queuecalls').where({ queue_id: queue.id, status: 'waiting' }).first()) as { id: string; reference_id: string } | undefined) ?? null,
        30_000,
        'the caller waiting',
      );
      const callA = (await callOf(CALLER))!;
      expect([waiting.reference_id, callA.node_id]).to.deep.equal([callA.id, n0.id]);

      const b = await dial(agentNumber, n1, AGENT, 9000);
      const callB = await until(async () => ((await callOf(AGENT))?.status === 'progressing' ? callOf(AGENT) : null), 30_000, 'the agent answered');
      expect(callB!.node_id).to.equal(n1.id);
      // taken across nodes: in service well before the dequeue's 30 s timeout
      await until(
        async () => ((await c.db('queuecalls').where({ id: waiting.id }).first()) as { status: string }).status === 'service',
        10_000,
        'the caller in service with the agent of the other node',
      ).catch(async (err: Error) => {
        throw new Error(`${err.message}\nNODE0 ${n0.out().slice(-1500)}\nNODE1 ${n1.out().slice(-1500)}`);
      });

      // they hear each other, not themselves
      await Promise.all([hearing(a.p, AGENT), hearing(b.p, CALLER)]);
      expectOnSwitches(c, backend);
      // the measured window: 100 frames (2 s) each hears, bounded by the media, not the wall clock
      const t0 = Date.now();
      await Promise.all([a.p.framesHeard(t0, 100), b.p.framesHeard(t0, 100)]);
      const t1 = Date.now();
      for (const [me, other] of [
        [a.p, b.p],
        [b.p, a.p],
      ] as const) {
        expect(me.presence(other.freq, t0, t1), `${me.freq} hears ${other.freq}`).to.be.greaterThan(HEARS);
        expect(me.presence(me.freq, t0, t1), `${me.freq} hears itself`).to.be.lessThan(0.1);
      }

      // the agent hangs up: the caller's flow goes on after queue_join (pause, hangup: A gets its BYE)
      const rb = await b.done;
      expect(rb.code, rb.errors).to.equal(0);
      const ra = await a.done;
      expect(ra.code, ra.errors).to.equal(0);
      const qc = await until(
        async () => {
          const row = (await c.db('queuecalls').where({ id: waiting.id }).first()) as { status: string } | undefined;
          return row?.status === 'done' ? row : null;
        },
        10_000,
        'the queuecall done',
      );
      expect(qc.status).to.equal('done');
      const flowA = await until(async () => (await c.db('activeflows').where({ reference_id: callA.id, status: 'ended' }).first()) ?? null, 10_000, "the caller's flow ended");
      expect(flowA.variables['svc.queuecall.result'], 'the Enqueue result').to.equal('bridged');
    });

    if (backend === 'embedded')
      it("<Queue url>: the whisper is fetched by the caller's node with DequeingCallSid, then the two are bridged", async () => {
        const [n0, n1] = c.nodes as [ClusterNode, ClusterNode];
        const queue = await queuesRepo(c.db).create(f.customer.id, { name: 'xnode whisper', wait_timeout: 0 });
        app.on('/whisper', '<Response><Pause length="1"/></Response>');
        const { number: callerNumber } = await numberWithFlow(c.db, '', [{ type: 'answer' }, { type: 'queue_join', option: { queue_id: queue.id } }, { type: 'hangup' }], f.customer.id);
        const { number: agentNumber } = await numberWithFlow(
          c.db,
          '',
          [{ type: 'answer' }, { type: 'queue_dequeue', option: { queue_id: queue.id, timeout: 30_000, url: app.url('/whisper'), method: 'POST' } }, { type: 'hangup' }],
          f.customer.id,
        );
        const a = await dial(callerNumber, n0, CALLER + 100);
        const waiting = await until(
          async () => ((await c.db('queuecalls').where({ queue_id: queue.id, status: 'waiting' }).first()) as { id: string } | undefined) ?? null,
          30_000,
          'the caller waiting',
        );
        const b = await dial(agentNumber, n1, AGENT + 100, 6000);
        const whisper = await app.next('/whisper', 15_000);
        const [callA, callB] = [(await callOf(CALLER + 100))!, (await callOf(AGENT + 100))!];
        expect([callA.node_id, callB.node_id]).to.deep.equal([n0.id, n1.id]);
        expect(whisper.method).to.equal('POST');
        expect(whisper.params).to.include({ CallSid: callSid(callA.id), QueueSid: toSid('QU', queue.id), DequeingCallSid: callSid(callB.id) });
        await until(async () => ((await c.db('queuecalls').where({ id: waiting.id }).first()) as { status: string }).status === 'service', 10_000, 'in service after the whisper');
        await Promise.all([hearing(a.p, AGENT + 100), hearing(b.p, CALLER + 100)]);
        const t0 = Date.now();
        await Promise.all([a.p.framesHeard(t0, 75), b.p.framesHeard(t0, 75)]);
        expect(a.p.presence(AGENT + 100, t0, Date.now()), 'the caller hears the agent').to.be.greaterThan(HEARS);
        expect(b.p.presence(CALLER + 100, t0, Date.now()), 'the agent hears the caller').to.be.greaterThan(HEARS);
        for (const r of [await b.done, await a.done]) expect(r.code, r.errors).to.equal(0);
      });

    if (backend === 'embedded')
      it('the agent leaving during the whisper: the caller goes back to waiting on its node, and the next agent takes it', async () => {
        const [n0, n1] = c.nodes as [ClusterNode, ClusterNode];
        const queue = await queuesRepo(c.db).create(f.customer.id, { name: 'xnode back', wait_timeout: 0 });
        app.on('/long-whisper', '<Response><Pause length="8"/></Response>');
        const { number: callerNumber } = await numberWithFlow(c.db, '', [{ type: 'answer' }, { type: 'queue_join', option: { queue_id: queue.id } }, { type: 'hangup' }], f.customer.id);
        const dequeue = (url?: string) => [{ type: 'answer' }, { type: 'queue_dequeue', option: { queue_id: queue.id, timeout: 30_000, ...(url ? { url } : {}) } }, { type: 'hangup' }];
        const { number: whisperingAgent } = await numberWithFlow(c.db, '', dequeue(app.url('/long-whisper')), f.customer.id);
        const { number: plainAgent } = await numberWithFlow(c.db, '', dequeue(), f.customer.id);
        const a = await dial(callerNumber, n0, CALLER + 200);
        const waiting = await until(
          async () => ((await c.db('queuecalls').where({ queue_id: queue.id, status: 'waiting' }).first()) as { id: string } | undefined) ?? null,
          30_000,
          'the caller waiting',
        );
        const status = async () => ((await c.db('queuecalls').where({ id: waiting.id }).first()) as { status: string }).status;
        // the first agent hangs up 3 s after its answer, while the caller hears the 8 s whisper
        const b1 = await dial(whisperingAgent, n1, AGENT + 200, 3000);
        await app.next('/long-whisper', 15_000);
        expect(await status()).to.equal('connecting');
        expect((await b1.done).code).to.equal(0);
        await until(async () => ((await status()) === 'waiting' ? true : null), 5_000, 'the caller back to waiting');
        expect((await callOf(CALLER + 200))!.status, 'the caller still up').to.equal('progressing');
        // the next agent takes it
        const b2 = await dial(plainAgent, n1, AGENT + 300, 5000);
        await until(async () => ((await status()) === 'service' ? true : null), 10_000, 'the caller in service with the next agent');
        await hearing(a.p, AGENT + 300);
        const t0 = Date.now();
        await a.p.framesHeard(t0, 75);
        expect(a.p.presence(AGENT + 300, t0, Date.now()), 'the caller hears the next agent').to.be.greaterThan(HEARS);
        for (const r of [await b2.done, await a.done]) expect(r.code, r.errors).to.equal(0);
        expect(
          app.requests.filter((r) => r.path === '/long-whisper'),
          'one whisper',
        ).to.have.length(1);
      });

    if (backend === 'embedded')
      it('a failure between the claim and service (the move to service throws): the caller goes back to waiting, the next agent takes it', async () => {
        const [n0, n1] = c.nodes as [ClusterNode, ClusterNode];
        const queue = await queuesRepo(c.db).create(f.customer.id, { name: 'xnode fail', wait_timeout: 0 });
        const { number: callerNumber } = await numberWithFlow(c.db, '', [{ type: 'answer' }, { type: 'queue_join', option: { queue_id: queue.id } }, { type: 'hangup' }], f.customer.id);
        const { number: agentNumber } = await numberWithFlow(
          c.db,
          '',
          [{ type: 'answer' }, { type: 'queue_dequeue', option: { queue_id: queue.id, timeout: 30_000 } }, { type: 'hangup' }],
          f.customer.id,
        );
        const a = await dial(callerNumber, n0, CALLER + 400);
        const waiting = await until(
          async () => ((await c.db('queuecalls').where({ queue_id: queue.id, status: 'waiting' }).first()) as { id: string } | undefined) ?? null,
          30_000,
          'the caller waiting',
        );
        const status = async () => ((await c.db('queuecalls').where({ id: waiting.id }).first()) as { status: string }).status;
        // the caller's node fails its move connecting → service (a real Postgres error, raised by a trigger for this queuecall only)
        await c.db.raw(
          `CREATE OR REPLACE FUNCTION dq_fail_service() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.id = '${waiting.id}' AND NEW.status = 'service' THEN RAISE EXCEPTION 'injected: no service'; END IF; RETURN NEW; END $$`,
        );
        await c.db.raw('DROP TRIGGER IF EXISTS dq_fail_service ON queuecalls; CREATE TRIGGER dq_fail_service BEFORE UPDATE ON queuecalls FOR EACH ROW EXECUTE FUNCTION dq_fail_service()');
        const before = ((await c.db('queuecalls').where({ id: waiting.id }).first()) as { tm_update: Date }).tm_update.getTime();
        try {
          const b1 = await dial(agentNumber, n1, AGENT + 400);
          // claimed (waiting → connecting), its move to service refused, then back to waiting: a newer tm_update
          const back = async () => {
            const row = (await c.db('queuecalls').where({ id: waiting.id }).first()) as { status: string; tm_update: Date };
            return row.status === 'waiting' && row.tm_update.getTime() > before;
          };
          await until(back, 10_000, 'the caller back to waiting').catch(async (err: Error) => {
            throw new Error(`${err.message} (${await status()})\nNODE0 ${n0.out().slice(-1500)}`);
          });
          expect((await b1.done).code, 'the first agent ended').to.equal(0);
        } finally {
          await c.db.raw('DROP TRIGGER IF EXISTS dq_fail_service ON queuecalls; DROP FUNCTION IF EXISTS dq_fail_service()');
        }
        expect((await callOf(CALLER + 400))!.status, 'the caller still up').to.equal('progressing');
        const b2 = await dial(agentNumber, n1, AGENT + 500, 4000);
        await until(async () => ((await status()) === 'service' ? true : null), 10_000, 'the caller in service with the next agent');
        await hearing(a.p, AGENT + 500);
        for (const r of [await b2.done, await a.done]) expect(r.code, r.errors).to.equal(0);
      });

    if (backend === 'embedded')
      it('a caller on a node that refuses the leg (404) is dialled once per dequeue, not on each pass', async () => {
        const [, n1] = c.nodes as [ClusterNode, ClusterNode];
        const queue = await queuesRepo(c.db).create(f.customer.id, { name: 'xnode refused', wait_timeout: 0 });
        const refuser = await refusingNode();
        const node = `refuser-${randomBytes(3).toString('hex')}`;
        await c.redis.set(c.prefix + nodeSipKey(node), `127.0.0.1:${refuser.port}`);
        await c.redis.set(c.prefix + nodeAliveKey(node), '1', 'EX', 60);
        const qc = await queuecallsRepo(c.db).create({ customer_id: f.customer.id, queue_id: queue.id, reference_id: randomUUID(), node_id: node });
        await c.db('queuecalls').where({ id: qc.id }).update({ status: 'waiting' });
        try {
          // 4 s of dequeue: 8 passes at least (every 500 ms), each would dial the refusing node again
          const { number: agentNumber } = await numberWithFlow(
            c.db,
            '',
            [{ type: 'answer' }, { type: 'queue_dequeue', option: { queue_id: queue.id, timeout: 4000 } }, { type: 'hangup' }],
            f.customer.id,
          );
          const b = await dial(agentNumber, n1, AGENT + 600);
          const rb = await b.done;
          expect(rb.code, rb.errors).to.equal(0);
          expect(refuser.invites.size, 'INVITEs to the refusing node').to.equal(1);
          const callB = (await callOf(AGENT + 600))!;
          const flow = await until(async () => (await c.db('activeflows').where({ reference_id: callB.id, status: 'ended' }).first()) ?? null, 10_000, "the agent's flow ended");
          expect(flow.variables['svc.dequeue.status']).to.equal('no-answer');
        } finally {
          refuser.close();
          await c.db('queuecalls').where({ id: qc.id }).delete();
          await c.redis.del(c.prefix + nodeSipKey(node), c.prefix + nodeAliveKey(node));
        }
      });
  });
