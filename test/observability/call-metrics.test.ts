/**
 * Concurrent calls and the answer-seizure ratio's counters (issue 38, docs/observability.md "Metrics"),
 * read the way Prometheus reads them: over HTTP from a /metrics listener (core/metrics-server.ts, the
 * one media-app's MEDIA_APP_METRICS_LISTEN starts) serving this process's registry, in which the
 * in-process media-app node and control-api count. Real sipp callers on loopback, real Postgres/Redis.
 */
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { platformRegistry } from '../../core/metrics';
import { startMetricsServer, type MetricsServer } from '../../core/metrics-server';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { answeringUas, killAllSipp, RtpSink, sipp, uacWaitsForBye, until } from '../../testkit/media-app/harness';
import { startStack, type Stack } from '../xfer/support';
import { trunkCaller } from '../../testkit/media-app/phones';

/** One scrape: `name{labels}` → value, as the text exposition writes them. */
async function scrape(port: number): Promise<Map<string, number>> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).to.equal(200);
  const out = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    const m = /^([a-z_:][a-z0-9_:]*(?:\{[^}]*\})?) (\S+)$/i.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

type Direction = 'incoming' | 'outgoing';
/**
 * `calls_active` over what it read when this suite started: the gauge is the process's, and a mocha
 * process may still hold calls of earlier suites' nodes (each media-app node in one process adds to it).
 */
const activeBase: Record<string, number> = {};
const active = (m: Map<string, number>, d: Direction) => {
  const v = m.get(`calls_active{direction="${d}"}`);
  return v === undefined ? undefined : v - (activeBase[d] ?? 0);
};
const answered = (m: Map<string, number>, d: Direction) => m.get(`calls_answered_total{direction="${d}"}`);
/** calls_ended_total of a direction, summed over hangup reasons: the attempts. */
const ended = (m: Map<string, number>, d: Direction) => [...m].filter(([k]) => k.startsWith(`calls_ended_total{direction="${d}",`)).reduce((n, [, v]) => n + v, 0);

describe('call metrics: concurrent calls, attempts and answers, scraped from /metrics', function () {
  this.timeout(120_000);
  let s: Stack;
  let metrics: MetricsServer;
  let talk = '';
  let refuse = '';

  before(async () => {
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    const cid = s.f.customer.id;
    await trunksRepo(s.t.ctx.db).create(cid, `cm${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const flows = flowsRepo(s.t.ctx.db);
    const answering = await flows.create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, { type: 'sleep', option: { duration: 4000 } }, { type: 'hangup' }]) });
    const refusing = await flows.create({ customer_id: cid, actions: parseActions([{ type: 'hangup', option: { reason: 'busy' } }]) });
    const tail = String(Date.now()).slice(-5);
    talk = `+8991381${tail}`;
    refuse = `+8991382${tail}`;
    await numbersRepo(s.t.ctx.db).create({ customer_id: cid, number: talk, type: 'virtual', call_flow_id: answering.id });
    await numbersRepo(s.t.ctx.db).create({ customer_id: cid, number: refuse, type: 'virtual', call_flow_id: refusing.id });
    metrics = await startMetricsServer(platformRegistry, { host: '127.0.0.1', port: 0 });
    const m = await scrape(metrics.port);
    for (const d of ['incoming', 'outgoing'] as const) activeBase[d] = m.get(`calls_active{direction="${d}"}`) ?? 0;
  });
  after(async () => {
    killAllSipp();
    await metrics?.close();
    await s?.close();
  });

  it("shows every series from the start; this suite's node holds no call yet", async () => {
    const m = await scrape(metrics.port);
    for (const d of ['incoming', 'outgoing'] as const) {
      expect(active(m, d), `calls_active ${d}`).to.equal(0);
      expect(answered(m, d), `calls_answered_total ${d}`).to.be.a('number');
    }
  });

  it('an answered incoming call: calls_active is 1 while it lasts, 0 after; one attempt and one answer', async () => {
    const m0 = await scrape(metrics.port);
    const sink = await RtpSink.open();
    try {
      const caller = await trunkCaller(talk, s.p.sipPort, sink.port, 20_000);
      // while the flow sleeps, the node holds one incoming call
      const during = await until(
        async () => {
          const m = await scrape(metrics.port);
          return active(m, 'incoming') === 1 ? m : null;
        },
        15_000,
        'calls_active{direction="incoming"} 1',
      );
      expect(active(during, 'outgoing')).to.equal(0);
      const r = await caller.done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      const m1 = await until(
        async () => {
          const m = await scrape(metrics.port);
          return active(m, 'incoming') === 0 && ended(m, 'incoming') > ended(m0, 'incoming') ? m : null;
        },
        15_000,
        'the call ended on the node',
      );
      expect(ended(m1, 'incoming') - ended(m0, 'incoming'), 'attempts').to.equal(1);
      expect(answered(m1, 'incoming')! - answered(m0, 'incoming')!, 'answers').to.equal(1);
      expect(answered(m1, 'outgoing')).to.equal(answered(m0, 'outgoing'));
    } finally {
      sink.close();
    }
  });

  it('an incoming call its flow refuses (busy) before answering: an attempt, no answer, never left active', async () => {
    const m0 = await scrape(metrics.port);
    const sink = await RtpSink.open();
    try {
      // the platform rings, then refuses: 486 Busy Here
      const scenario = uacWaitsForBye(`${refuse}@127.0.0.1:${s.p.sipPort}`, 'caller', sink.port, { expectStatus: 486 }).replace(
        '<recv response="100" optional="true"/>',
        '<recv response="100" optional="true"/>\n<recv response="180" optional="true"/>',
      );
      const r = await sipp(scenario, [`127.0.0.1:${s.p.sipPort}`, '-i', '127.0.0.1', '-m', '1']).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      const m1 = await until(
        async () => {
          const m = await scrape(metrics.port);
          return ended(m, 'incoming') > ended(m0, 'incoming') && active(m, 'incoming') === 0 ? m : null;
        },
        15_000,
        'the refused call counted',
      );
      expect(ended(m1, 'incoming') - ended(m0, 'incoming')).to.equal(1);
      expect(answered(m1, 'incoming')).to.equal(answered(m0, 'incoming'));
    } finally {
      sink.close();
    }
  });

  it('an answered outgoing call (POST /calls to a sipp phone): calls_active is 1 while it lasts; one attempt and one answer', async () => {
    const m0 = await scrape(metrics.port);
    const uasPort = await freePort();
    const phone = sipp(answeringUas({ pauseMs: 300 }), ['-i', '127.0.0.1', '-p', String(uasPort), '-m', '1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
    await phone.port;
    const call = await s.api.post('/calls', {
      source: { type: 'sip', target: 'alice@example.test' },
      destinations: [{ type: 'sip', target: `sip:phone@127.0.0.1:${uasPort}` }],
      actions: [{ type: 'sleep', option: { duration: 3000 } }, { type: 'hangup' }],
    });
    expect(call.status, JSON.stringify(call.body)).to.equal(200);
    await until(async () => active(await scrape(metrics.port), 'outgoing') === 1, 15_000, 'calls_active{direction="outgoing"} 1');
    const r = await phone.done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const m1 = await until(
      async () => {
        const m = await scrape(metrics.port);
        return active(m, 'outgoing') === 0 && ended(m, 'outgoing') > ended(m0, 'outgoing') ? m : null;
      },
      15_000,
      'the outgoing call ended on the node',
    );
    expect(ended(m1, 'outgoing') - ended(m0, 'outgoing'), 'attempts').to.equal(1);
    expect(answered(m1, 'outgoing')! - answered(m0, 'outgoing')!, 'answers').to.equal(1);
    expect(answered(m1, 'incoming')).to.equal(answered(m0, 'incoming'));
  });

  it('an outgoing call hung up through the API before it was answered: an attempt, no answer, not left active', async () => {
    const m0 = await scrape(metrics.port);
    const call = await s.api.post('/calls', {
      source: { type: 'sip', target: 'alice@example.test' },
      destinations: [{ type: 'sip', target: 'sip:bob@example.test:5090' }],
      actions: [{ type: 'answer' }],
    });
    expect(call.status, JSON.stringify(call.body)).to.equal(200);
    const hung = await s.api.post(`/calls/${call.body.calls[0].id as string}/hangup`, undefined);
    expect(hung.status, JSON.stringify(hung.body)).to.equal(200);
    // the node may have taken the originate command meanwhile: it then holds the call until it sees the hangup
    const m1 = await until(
      async () => {
        const m = await scrape(metrics.port);
        return ended(m, 'outgoing') > ended(m0, 'outgoing') && active(m, 'outgoing') === 0 ? m : null;
      },
      15_000,
      'the outgoing call counted',
    );
    expect(ended(m1, 'outgoing') - ended(m0, 'outgoing')).to.equal(1);
    expect(answered(m1, 'outgoing')).to.equal(answered(m0, 'outgoing'));
    expect(active(m1, 'outgoing')).to.equal(0);
  });
});
