// Issue 13 item 4, "a slow or failing webhook receiver": while calls run, one customer's receiver
// hangs (never answers) and two others answer 500 slowly. The audio of the calls must keep its
// timing (RTP inter-arrival at the caller against a baseline run of the same calls with no
// webhook at all, measured in this test), and deliveries must follow the webhook rules
// (control-api/webhooks/README.md): 5xx and timeouts retried with doubling delays, at most
// maxAttempts tries then `failed`, order kept per customer, everything delivered once the
// receiver is healthy again, nothing left pending.
import { expect } from 'chai';
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { createFixture } from '../../testkit/api';
import { testDb, testDatabaseUrl } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { killAllSipp, RtpSink, uacWaitsForBye, until } from '../../testkit/media-app/harness';
import { startFaultPlatform, type FaultPlatform } from './faults/platform';
import { gapsBetween, oneCall, percentile } from './faults/sipp';

const BASE_DELAY_MS = 150;
const MAX_ATTEMPTS = 5;
const TIMEOUT_MS = 1000;

type Mode = 'hang' | 'slow500' | 'ok';
interface Hit {
  at: number;
  topic: string;
  eventType: string;
  timestamp: string;
  body: string;
  answered: number;
}

/** A receiver whose behaviour the test switches: hang, 500 after 700 ms, or 200 at once. */
async function badReceiver(): Promise<{ url: string; hits: Hit[]; mode: Mode; close(): Promise<void> }> {
  const state = { mode: 'hang' as Mode, hits: [] as Hit[] };
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const e = JSON.parse(body) as { event_type: string; topic: string; timestamp: string };
      const hit: Hit = { at: Date.now(), topic: e.topic, eventType: e.event_type, timestamp: e.timestamp, body, answered: 0 };
      state.hits.push(hit);
      if (state.mode === 'hang') return void held.push(res);
      if (state.mode === 'slow500') {
        setTimeout(() => {
          hit.answered = 500;
          res.writeHead(500).end('busy');
        }, 700);
        return;
      }
      hit.answered = 200;
      res.writeHead(200).end('ok');
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${port}/hook`,
    hits: state.hits,
    get mode() {
      return state.mode;
    },
    set mode(m: Mode) {
      state.mode = m;
    },
    async close() {
      for (const r of held) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('faults: slow and failing webhook receivers while calls run', function () {
  this.timeout(120_000);
  let p: FaultPlatform;
  const receivers: Awaited<ReturnType<typeof badReceiver>>[] = [];

  before(async function () {
    this.timeout(60_000);
    const tag = `${process.pid}-${Date.now()}`;
    p = await startFaultPlatform({
      db: await testDb(),
      databaseUrl: await testDatabaseUrl(),
      env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }, // the receivers are on loopback
      // the shipped rules, with shorter delays and timeout so the test stays short
      webhooks: { group: `faults-webhook-${tag}`, queue: `faults-webhook-${tag}`, baseDelayMs: BASE_DELAY_MS, maxAttempts: MAX_ATTEMPTS, timeoutMs: TIMEOUT_MS },
    });
  });
  after(async function () {
    this.timeout(30_000);
    killAllSipp();
    for (const r of receivers) await r.close();
    await p?.close();
  });

  /** Three customers, each with a number whose flow answers, talks ~6 s and hangs up. */
  async function customers(prefix: string) {
    const db = await testDb();
    const out: { cid: string; number: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const f = await createFixture(p.api);
      const cid = f.customer.id;
      await trunksRepo(db).create(cid, `trwh${prefix}${i}${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] }); // each customer's own trunk: the dialled number's owner claims the address
      const flow = await flowsRepo(db).create({
        customer_id: cid,
        actions: parseActions([{ type: 'answer' }, { type: 'talk', option: { text: 'This is a test announcement. '.repeat(4), language: 'en-US' } }, { type: 'hangup' }]),
      } as never);
      const number = `+8993${prefix}${String(Date.now()).slice(-6)}${i}`;
      await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
      out.push({ cid, number });
    }
    return out;
  }

  /** Runs one call per customer at once; returns the inter-arrival gaps of the platform's audio. */
  async function callsOf(cs: { number: string }[]): Promise<number[]> {
    const sinks = await Promise.all(cs.map(() => RtpSink.open()));
    try {
      const results = await Promise.all(cs.map((c, i) => oneCall(uacWaitsForBye(`${c.number}@127.0.0.1:${p.sipPort}`, '+15552220000', sinks[i]!.port, { byeTimeoutMs: 30_000 }), p.sipPort, 40_000)));
      for (const r of results) expect(r.code, r.errors + r.messages.slice(-2000)).to.equal(0);
      const gaps: number[] = [];
      for (const s of sinks) {
        expect(s.packets, 'audio reached the caller').to.be.greaterThan(100);
        // the talk: from half a second after the first packet to the last
        gaps.push(...gapsBetween(s.times, s.times[0]! + 500, s.times[s.times.length - 1]!));
      }
      return gaps;
    } finally {
      for (const s of sinks) s.close();
    }
  }

  const jitter = (gaps: number[]) => gaps.map((g) => Math.abs(g - 20));

  it('keeps the media timing of live calls and retries deliveries by the rules', async () => {
    // the receivers stamp each attempt on this process's loop, later than the request was sent (which
    // started the sender's timeout) by up to the loop's delay: the retries' spacing is judged less the
    // longest delay seen while the attempts came (a loaded machine's: at least 52 ms in one CI run)
    const loop = monitorEventLoopDelay({ resolution: 10 });
    // baseline: the same calls, no webhook configured
    const base = await customers('1');
    const baseGaps = await callsOf(base);

    const bad = await customers('2');
    const db = await testDb();
    const hang = await badReceiver();
    const slow = [await badReceiver(), await badReceiver()];
    slow.forEach((r) => (r.mode = 'slow500'));
    receivers.push(hang, ...slow);
    const rx = [hang, ...slow];
    for (let i = 0; i < 3; i++) await db('customers').where({ id: bad[i]!.cid }).update({ webhook_uri: rx[i]!.url, webhook_method: 'POST' });
    loop.enable();
    const badGaps = await callsOf(bad);
    const healAt = Date.now();
    for (const r of rx) r.mode = 'ok';

    const b99 = percentile(jitter(baseGaps), 99);
    const w99 = percentile(jitter(badGaps), 99);
    const figures =
      `RTP inter-arrival, ${baseGaps.length} / ${badGaps.length} gaps: baseline p50 ${percentile(baseGaps, 50).toFixed(1)} ms, |gap-20| p99 ${b99.toFixed(1)} ms, max ${Math.max(...baseGaps).toFixed(1)} ms; ` +
      `bad receivers p50 ${percentile(badGaps, 50).toFixed(1)} ms, |gap-20| p99 ${w99.toFixed(1)} ms, max ${Math.max(...badGaps).toFixed(1)} ms`;
    console.log(`      ${figures}`);
    // tolerant bounds (shared 2-core machine, other suites running): no more than 50 ms added at p99,
    // no hole over 300 ms (or 150 ms past the baseline's own worst, when the machine is that loaded)
    expect(w99, figures).to.be.below(b99 + 50);
    expect(Math.max(...badGaps), figures).to.be.below(Math.max(300, Math.max(...baseGaps) + 150));
    expect(percentile(badGaps, 50), figures).to.be.within(17, 23);

    // deliveries: nothing left pending once the receivers answer again
    const ids = bad.map((c) => c.cid);
    const rows = await until(
      async () => {
        const r = await db('webhook_deliveries').whereIn('customer_id', ids).orderBy('seq');
        return r.length >= 15 && r.every((d) => d.status !== 'pending') ? r : null;
      },
      60_000,
      'every delivery delivered or failed',
    );
    loop.disable();
    // (the histogram counts a tick's whole interval: its resolution is in every figure)
    const loopDelayMs = Math.max(0, loop.max / 1e6 - 10);
    const failed = rows.filter((d) => d.status === 'failed');
    const delivered = rows.filter((d) => d.status === 'delivered');
    console.log(`      deliveries: ${rows.length} (${delivered.length} delivered, ${failed.length} failed after ${MAX_ATTEMPTS} attempts), ${rx.reduce((n, r) => n + r.hits.length, 0)} HTTP attempts`);
    expect(failed.length, 'some deliveries met the bad receivers').to.be.greaterThan(0);
    expect(delivered.length).to.be.greaterThan(0);
    for (const d of failed) expect(d.attempts).to.equal(MAX_ATTEMPTS);
    expect(rows.filter((d) => d.status === 'refused')).to.have.length(0);

    for (let i = 0; i < 3; i++) {
      const r = rx[i]!;
      const mine = rows.filter((d) => d.customer_id === ids[i]);
      // the receiver saw each delivery exactly `attempts` times, with the same body each time
      for (const d of mine)
        expect(
          r.hits.filter((h) => h.body === d.body),
          `${d.event_type} attempts`,
        ).to.have.length(d.attempts);
      // retries wait at least base * 2^(n-1) after the previous attempt ended
      for (const d of mine.filter((x) => x.attempts > 1)) {
        const at = r.hits.filter((h) => h.body === d.body).map((h) => h.at);
        for (let k = 1; k < at.length; k++) {
          const attemptTime = i === 0 ? TIMEOUT_MS : 700;
          const stampSlack = Math.max(50, loopDelayMs + 10);
          const backoff = BASE_DELAY_MS * 2 ** (k - 1);
          if (stampSlack >= backoff) {
            console.log(`      retry ${k} of ${d.event_type}: the loop's longest delay (${loopDelayMs.toFixed(0)} ms) hides its ${backoff} ms backoff, not judged`);
            continue;
          }
          expect(at[k]! - at[k - 1]!, `retry ${k} of ${d.event_type} (the loop's longest delay ${loopDelayMs.toFixed(0)} ms)`).to.be.at.least(attemptTime + backoff - stampSlack);
        }
      }
      // order kept per customer: the receiver saw first attempts in stream order
      const firstSeen = mine.map((d) => r.hits.findIndex((h) => h.body === d.body));
      expect(firstSeen, 'first attempts in order').to.deep.equal([...firstSeen].sort((a, b) => a - b));
      // after the heal, every delivery still pending went through on its next attempt
      for (const d of mine.filter((x) => x.status === 'delivered')) {
        const last = r.hits.filter((h) => h.body === d.body).pop()!;
        expect(last.at, `${d.event_type} delivered after the heal`).to.be.at.least(healAt - 1000);
      }
      expect(
        mine.some((d) => d.event_type === 'call_hangup' && d.status === 'delivered'),
        'the hangup event reached the receiver',
      ).to.equal(true);
    }
  });
});
