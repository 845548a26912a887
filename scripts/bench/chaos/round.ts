/**
 * One chaos round: N calls from one sipp (each with its own RTP sink; half hear a talk flow, half are
 * bridged to a carrier on loopback that plays a tone, an outgoing PSTN leg that is billed) held `holdMs` and then hung up by the caller; a fault a few seconds after they are all up; probes
 * of the API and of a new call until both answer; then what the round left: calls lost (the caller got
 * a BYE although nobody hung up, its own BYE was refused or unanswered, or its audio stopped), and the
 * records of the round's calls once things settled.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { killAllSipp, RtpSink, sipp, sippCalls, uacWaitsForBye, type SippResult } from '../../../testkit/media-app/harness';
import { callIndex, traceCalls } from '../../../testkit/reliability/sipp-trace';
import { startGateway } from './gateway';
import { BRIDGE_NUMBER, HOLD_NUMBER, PROBE_NUMBER, type Stand } from './stand';

export type Fault = 'none' | 'control-api' | 'sip-server' | 'media-app' | 'media-worker' | 'redis' | 'postgres';

export interface RoundResult {
  fault: Fault;
  calls: number;
  /** calls that were up (a row `progressing`) before the fault */
  up: number;
  /** the caller received a BYE from the platform */
  byeFromPlatform: number;
  /** the caller's own BYE got no 200 (the dialog was gone) */
  byeRefused: number;
  /** no audio at the caller in the 2 s before the hang-up (among calls not ended by a BYE) */
  mediaStopped: number;
  lost: number;
  /** ms from the fault until the API answered 200 / a new call was answered and ended; -1: not within the bound */
  apiMs: number;
  callMs: number;
  /** after the settle: call rows not `hangup`, billing rows still `progressing`, answered PSTN legs without a charge, activeflows still running */
  notHangup: number;
  billingOpen: number;
  billingMissing: number;
  flowsRunning: number;
  /** the 1-minute load average at the round's start */
  load: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** ms from `t0` until `ok` first holds, polled every 500 ms; -1 after `boundMs`. */
async function firstOk(t0: number, boundMs: number, ok: () => Promise<boolean>): Promise<number> {
  while (Date.now() - t0 < boundMs) {
    if (await ok().catch(() => false)) return Date.now() - t0;
    await sleep(500);
  }
  return -1;
}

export function apiAnswers(s: Stand): Promise<boolean> {
  return fetch(`${s.pp.apiUrl}/calls?page_size=1&accesskey=${s.accesskey}`, { signal: AbortSignal.timeout(3000) }).then((r) => r.status === 200);
}

/** One call to the probe number: answered, then the platform's BYE (sipp exit 0). */
export async function callAnswers(s: Stand): Promise<boolean> {
  const sink = await RtpSink.open();
  try {
    const r = await sipp(
      uacWaitsForBye(`${PROBE_NUMBER}@127.0.0.1:${s.pp.sipPort}`, 'probe', sink.port, { byeTimeoutMs: 5000 }),
      [`127.0.0.1:${s.pp.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '8s'],
      { killAfterMs: 10_000 },
    ).done;
    return r.code === 0;
  } finally {
    sink.close();
  }
}

async function inject(s: Stand, fault: Fault): Promise<void> {
  if (fault === 'none') return;
  if (fault === 'postgres') return s.killPostgres();
  if (fault === 'redis') return s.killRedis();
  if (fault === 'media-worker') return s.pp.procs['media-app'].kill('SIGUSR2');
  s.pp.procs[fault].kill('SIGKILL');
}

/**
 * The round's call rows once settled (every row `hangup`, or `settleMs` gone): rows not `hangup`,
 * billing rows still `progressing`, answered PSTN legs without their charge, activeflows still running.
 */
async function records(s: Stand, since: Date, settleMs: number): Promise<Pick<RoundResult, 'notHangup' | 'billingOpen' | 'billingMissing' | 'flowsRunning'>> {
  const rows = () => s.db('calls').where({ customer_id: s.customerId }).where('tm_create', '>=', since).select('id', 'status', 'direction', 'tm_progressing');
  const end = Date.now() + settleMs;
  let calls = await rows().catch(() => []);
  while (Date.now() < end && (calls.length === 0 || calls.some((c) => c.status !== 'hangup'))) {
    await sleep(500);
    calls = await rows().catch(() => calls);
  }
  const ids = calls.map((c) => c.id as string);
  const bills = ids.length ? await s.db('billings').whereIn('reference_id', ids).select('reference_id', 'status') : [];
  const flows = ids.length ? await s.db('activeflows').whereIn('reference_id', ids).where({ status: 'running' }).count({ n: 'id' }) : [{ n: 0 }];
  const charged = new Set(bills.map((b) => b.reference_id as string));
  return {
    notHangup: calls.filter((c) => c.status !== 'hangup').length,
    billingOpen: bills.filter((b) => b.status === 'progressing').length,
    billingMissing: calls.filter((c) => c.direction === 'outgoing' && c.tm_progressing && !charged.has(c.id)).length,
    flowsRunning: Number(flows[0]!.n),
  };
}

export interface RoundOptions {
  calls: number;
  holdMs: number;
  rate: number;
  /** how long the probes may take after the fault */
  recoveryBoundMs: number;
  settleMs: number;
}

export async function runRound(s: Stand, fault: Fault, o: RoundOptions): Promise<RoundResult> {
  const load = Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  const since = new Date(Date.now() - 1000);
  const sinks = await Promise.all(Array.from({ length: o.calls }, () => RtpSink.open()));
  try {
    // every other call is bridged to the carrier (an outgoing PSTN leg), the rest hear the talk flow
    const bridged = Math.floor(o.calls / 2);
    const gateway = await startGateway(s.gatewayPort, bridged, o.holdMs + 60_000);
    const t0 = Date.now();
    const scenario = uacWaitsForBye(`[field1]@127.0.0.1:${s.pp.sipPort}`, 'chaos', '[field0]', { hangUpAfterMs: o.holdMs });
    const run = sippCalls(
      scenario,
      `127.0.0.1:${s.pp.sipPort}`,
      sinks.map((k, i) => [k.port, i % 2 ? BRIDGE_NUMBER : HOLD_NUMBER]),
      { timeoutMs: o.holdMs + 60_000, rate: o.rate },
    );
    // every call up and its audio arriving, then the fault
    const rampEnd = t0 + (o.calls / o.rate) * 1000 + 15_000;
    let up = 0;
    while (Date.now() < rampEnd) {
      up = Number((await s.db('calls').where({ customer_id: s.customerId, status: 'progressing', direction: 'incoming' }).where('tm_create', '>=', since).count({ n: 'id' }))[0]!.n);
      if (up >= o.calls && sinks.every((k) => k.packets > 0)) break;
      await sleep(250);
    }
    await sleep(2000);
    const tFault = Date.now();
    await inject(s, fault);
    const [apiMs, callMs] = await Promise.all([firstOk(tFault, o.recoveryBoundMs, () => apiAnswers(s)), firstOk(tFault, o.recoveryBoundMs, () => callAnswers(s))]);
    // audio at each caller just before the first hang-ups (calls started at t0 or later)
    const check = t0 + o.holdMs - 500;
    if (Date.now() < check) await sleep(check - Date.now());
    const now = performance.now();
    const silent = new Set(sinks.map((k, i) => ((k.times.at(-1) ?? 0) < now - 2000 ? i : -1)).filter((i) => i >= 0));
    const result: SippResult = await run.done;
    const traced = [...traceCalls(result.messages).values()];
    const byBye = new Set(traced.filter((c) => c.byeFromPlatform).map((c) => callIndex(c.callId)));
    const refused = new Set(traced.filter((c) => !c.byeFromPlatform && !c.ownByeAnswered).map((c) => callIndex(c.callId)));
    const mediaOnly = [...silent].filter((i) => !byBye.has(i) && !refused.has(i));
    const lost = new Set([...byBye, ...refused, ...mediaOnly]);
    await Promise.race([gateway.done, sleep(20_000)]);
    const rec = await records(s, since, o.settleMs);
    return {
      fault,
      calls: o.calls,
      up,
      byeFromPlatform: byBye.size,
      byeRefused: refused.size,
      mediaStopped: mediaOnly.length,
      lost: lost.size,
      apiMs,
      callMs,
      ...rec,
      load,
    };
  } finally {
    killAllSipp();
    for (const k of sinks) k.close();
  }
}
