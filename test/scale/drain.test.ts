// Drain: SIGTERM to a node's media-app (media-app/main.ts) answers OPTIONS and new INVITEs with 503,
// so the edge sends new calls to the other node at once; the node's live calls run to their end and
// then it exits; DRAIN_TIMEOUT_SEC bounds the wait.
import { expect } from 'chai';
import request from 'supertest';
import { createFixture } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { killAllSipp, RtpSink, sipp, uacWaitsForBye, until } from '../../testkit/media-app/harness';
import { Cluster } from '../../testkit/scale/cluster';
import { numberWithFlow } from '../../testkit/scale/fixtures';

describe('scale: draining a node', function () {
  this.timeout(180_000);
  let c: Cluster;
  const sinks: RtpSink[] = [];

  before(async () => {
    await truncateAll();
    c = await Cluster.start({ env: { DRAIN_TIMEOUT_SEC: '60' }, nodeEnv: [{}, { DRAIN_TIMEOUT_SEC: '3' }] });
  });
  after(async () => {
    killAllSipp();
    sinks.forEach((s) => s.close());
    await c?.close();
  });

  async function calls(number: string, n: number) {
    // one sink for the n calls of one sipp
    const sink = await RtpSink.open({ many: true });
    sinks.push(sink);
    return sipp(
      uacWaitsForBye(`${number}@127.0.0.1:${c.edge.port}`, 'pbx', sink.port, { byeTimeoutMs: 60_000 }),
      [`127.0.0.1:${c.edge.port}`, '-i', '127.0.0.1', '-m', String(n), '-r', '20', '-l', String(n), '-timeout', '80s'],
      { killAfterMs: 90_000 },
    );
  }

  it('SIGTERM: no live call is dropped, new calls go to the other node, the node exits once its calls ended', async () => {
    const [n0, n1] = c.nodes as [Cluster['nodes'][0], Cluster['nodes'][0]];
    const { customerId, number } = await numberWithFlow(c.db, '127.0.0.1/32', [{ type: 'answer' }, { type: 'sleep', option: { duration: 6000 } }, { type: 'hangup' }]);
    const first = await calls(number, 8);
    const up = await until(
      async () => {
        const rs = await c.db('calls').where({ customer_id: customerId, status: 'progressing' }).select('id', 'node_id');
        return rs.length === 8 ? rs : null;
      },
      20_000,
      '8 calls up',
    );
    const onN0 = up.filter((r) => r.node_id === n0.id).map((r) => r.id as string);
    expect(onN0.length, 'calls on the node drained').to.be.greaterThan(0);
    const t0 = Date.now();
    n0.signal('SIGTERM');
    // new calls right away: before the edge's next probe the node refuses them (503) and the edge tries the other
    const second = await calls(number, 6);
    // originates from the API (shared queue): only the node not draining takes them
    const f = await createFixture(c.apis[0]!.ctx);
    const own = await numberWithFlow(c.db, '', [{ type: 'answer' }, { type: 'hangup' }], f.customer.id);
    const tel = { type: 'tel', target: own.number };
    await new Promise((r) => setTimeout(r, 500)); // the drain has paused the originate worker
    for (let i = 0; i < 4; i++) {
      const res = await request(c.apis[i % 2]!.app)
        .post('/v1.0/calls')
        .set('Authorization', `Bearer ${f.token}`)
        .send({ source: tel, destinations: [tel], actions: [{ type: 'hangup' }] });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    }
    let seen: unknown[] = [];
    const originated = await until(
      async () => {
        // the number's flow runs on an incoming leg of the node that took the originate
        const rs = await c.db('calls').where({ customer_id: f.customer.id, direction: 'incoming' }).select('node_id', 'status', 'hangup_reason');
        seen = rs;
        return rs.length === 4 && rs.every((r) => r.node_id) ? rs : null;
      },
      20_000,
      'the originates taken',
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(seen)}`);
    });
    expect(
      originated.every((r) => r.node_id === n1.id),
      `originates on ${originated.map((r) => r.node_id)}`,
    ).to.equal(true);
    await until(async () => (await c.edge.states())[n0.sipPort]?.startsWith('I'), 5000, 'the edge marks the draining node inactive');
    const [r1, r2] = await Promise.all([first.done, second.done]);
    expect(r1.code, r1.errors.slice(-2000)).to.equal(0);
    expect(r2.code, r2.errors.slice(-2000)).to.equal(0);
    const code = await n0.exited;
    const drainedMs = Date.now() - t0;
    expect(code).to.equal(0);
    expect(drainedMs, 'waited for its calls').to.be.greaterThan(2000);
    const rows = await until(
      async () => {
        const rs = await c.db('calls').where({ customer_id: customerId }).select('id', 'status', 'node_id', 'hangup_by', 'hangup_reason', 'tm_create');
        return rs.length === 14 && rs.every((x) => x.status === 'hangup') ? rs : null;
      },
      20_000,
      '14 calls ended',
    );
    // every call ran its flow to the hang-up, none was cut by the drain
    for (const r of rows) expect(r, r.id).to.include({ hangup_by: 'local', hangup_reason: 'normal' });
    const late = rows.filter((r) => new Date(r.tm_create).getTime() >= t0);
    expect(late.length).to.equal(6);
    expect(
      late.every((r) => r.node_id === n1.id),
      'new calls on the other node',
    ).to.equal(true);
  });

  it('DRAIN_TIMEOUT_SEC bounds the drain: a call still up then is ended and the node exits', async () => {
    const n1 = c.nodes[1]!;
    const { customerId, number } = await numberWithFlow(c.db, '127.0.0.1/32', [{ type: 'answer' }, { type: 'sleep', option: { duration: 60_000 } }, { type: 'hangup' }]);
    const call = await calls(number, 1);
    await until(async () => (await c.db('calls').where({ customer_id: customerId, status: 'progressing', node_id: n1.id })).length === 1, 15_000, 'call up on the last node');
    const t0 = Date.now();
    n1.signal('SIGTERM');
    expect(await n1.exited).to.equal(0);
    const ms = Date.now() - t0;
    expect(ms).to.be.within(2500, 15_000);
    const r = await call.done;
    expect(r.code, 'the caller got a BYE').to.equal(0);
    const [row] = await until(
      async () => {
        const rs = await c.db('calls').where({ customer_id: customerId }).select('status', 'hangup_by');
        return rs[0]?.status === 'hangup' ? rs : null;
      },
      10_000,
      'call ended',
    );
    expect(row.hangup_by).to.equal('local');
  });
});
