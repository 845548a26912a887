/**
 * Evals at load (issue 56, docs/evals.md "Performance"): the same scenario run by an evals worker with
 * LOW then HIGH concurrent simulated calls (default 5 and 50), in the same run of this script, against an
 * ai_talk agent on the vendors' stand-ins (the OpenAI-compatible LLM, Deepgram's live transcription and
 * Aura voice: stand-ins.ts), over SIP and RTP through the platform's edge. Reports each run's pass count,
 * each turn stage's p50 and p90 (of the whole-ms figures ai_talk recorded, read as grouped data: verdict.ts)
 * at both loads, their ratio and PASS or FAIL against the tolerance (10 %), beside the load average, where the CPU went and the platform's
 * event-loop delay during each run (processes.ts). Each run is awaited through its end event against a
 * deadline (run-end.ts); exits 0 on PASS, 1 on FAIL, 2 when the bench itself failed (a run past its deadline).
 *
 *   source .data/env && npx tsx scripts/bench/evals/run.ts [--low 5] [--high 50] [--tolerance 0.1]
 *     [--stt deepgram|pocketsphinx] [--tts deepgram|espeak-ng] [--callers own-process|same-process] [--ask-at <ms>]
 *     [--queries] [--spacing 100] [--low-calls <HIGH>] [--rounds 2]
 *
 * `--stt pocketsphinx` / `--tts espeak-ng`: the agent on the platform's local recogniser / voice (child
 * processes of the platform) instead of the vendors' stand-ins; `--callers same-process`: the evals worker
 * on the platform's own event loop (the layout before the fix, docs/evals.md "Performance").
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pino from 'pino';
import { REPORT_DIR, reportPath } from '../report';
import { parseActions } from '../../../core/flow';
import { flowsRepo } from '../../../core/repos/flows';
import { numbersRepo } from '../../../core/repos/numbers';
import { trunksRepo } from '../../../core/repos/trunks';
import { aisRepo } from '../../../core/repos/ais';
import { repos } from '../../../core/repos';
import { evalScenariosRepo } from '../../../core/repos/eval-scenarios';
import { evalRunsRepo, type EvalRunRow } from '../../../core/repos/eval-runs';
import { evalScenarioInput } from '../../../core/evals/schema';
import type { EvalRunScenario } from '../../../core/db/rows/evals';
import { testDb, testDatabaseUrl } from '../../../testkit/db';
import { startPlatform } from '../../../testkit/media-app/harness';
import { loadEvalsConfig } from '../../../evals/config';
import { EvalWorker } from '../../../evals/worker';
import { eventStreamKey } from '../../../core/events/bus';
import { storageBackend } from '../../../core/storage/backend';
import { compareStages, formatRows, positiveCount, stageSamples, verdict } from './verdict';
import { awaitRunEnd, runDeadlineMs } from './run-end';
import { askLine, cpuShares, endChild, firstLine, loopDelay, sampleCpu, tsxChild } from './processes';
import type { StandInSettings, StandInUrls } from './stand-ins';
import { STAND_IN_PARTS, type StandInPart } from './stand-in-parts';
import { beforeListening, describeStart, kindOf, recordCallStarts, type CallStart } from '../../../testkit/call-start-queries';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  if (i > 0 && process.argv[i + 1] === undefined) throw new Error(`--${name} needs a value`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const LOW = positiveCount('low', arg('low', '5'));
const HIGH = positiveCount('high', arg('high', '50'));
const TOLERANCE = Number(arg('tolerance', '0.1'));
const STT = arg('stt', 'deepgram');
const TTS = arg('tts', 'deepgram');
const CALLERS = arg('callers', 'own-process');
/** `--queries`: each run's platform queries listed by statement (how many a call makes), not only counted */
/**
 * `--low-calls <n>` (default HIGH): the low load's runs place this many calls in all, LOW at a time, so
 * each stage's tail is read from as many turns at the low load as one high run gives: with 5 turns the
 * upper percentiles are their maximum, which falls short of the same distribution's, and a tail the
 * agent has at any load read as a slowdown at 50.
 */
const LOW_CALLS = positiveCount('low-calls', arg('low-calls', String(HIGH)));
/**
 * `--rounds <n>` (default 2): the low load's calls are placed in n runs (LOW_CALLS / n calls each), each
 * followed by a run at the high load (HIGH calls): low, high, low, high. On a machine shared with other
 * work the two loads then sample the same stretch of it; one low run of 3 minutes then one high run of 20 s
 * put the whole comparison on whatever the neighbours did in those 20 s.
 */
const ROUNDS = positiveCount('rounds', arg('rounds', '2'));
const LIST_QUERIES = process.argv.includes('--queries');
const ANSWER = 'We are open from nine in the morning until six in the evening.';
const PHRASES = ['what are your opening hours', 'thank you goodbye'];
/**
 * When the caller asks: by default once it has heard the agent's greeting (1.5 s after the greeting's
 * start; the greeting takes about 1 s), as a person does; `--ask-at <ms>`: at that fixed time after the
 * answer, greeting or not (the scenario before the fix: 1000), which at 50 calls falls before the agent
 * listens (docs/evals.md "Performance").
 */
const ASK_AT = process.argv.includes('--ask-at') ? Number(arg('ask-at', '1000')) : null;
const GREETING = ASK_AT === null ? 'Hello, how can I help you?' : '';
const QUESTION = 'What are your opening hours?';
/**
 * `--spacing <ms>` (default 100): the worker starts a run's calls this far apart (EVALS_CALL_SPACING_MS),
 * a ramp, at both loads: 50 calls started in the same instant with the same script had all their turns
 * in the same second, and the run measured 50 simultaneous turns, not an agent carrying 50 calls
 * (docs/evals.md "Performance"). The question then waits out the high load's ramp (1.5 s after the
 * greeting, plus HIGH × spacing), so every turn, at either load, comes with all the run's calls up.
 */
const SPACING_MS = Number(arg('spacing', '100'));
const RAMP_MS = HIGH * SPACING_MS;
const TURNS = [...(ASK_AT === null ? [{ say: QUESTION, after_agent_ms: 1500 + RAMP_MS }] : [{ wait_ms: ASK_AT }, { say: QUESTION }]), { wait_ms: 9000 }, { hangup: true }];
/** the worker's settings (EVALS_*), the same in either layout */
const WORKER_ENV = { EVALS_POLL_MS: '100', EVALS_SETTLE_MS: '10000', EVALS_ANSWER_TIMEOUT_MS: '20000', EVALS_AGENT_WAIT_MS: '20000', EVALS_CALL_SPACING_MS: String(SPACING_MS) };
/** the scenario at its longest: the wait for the greeting (or the fixed one), 1.5 s and the ramp, 4 s to say the question, 9 s */
const CALL_MS = Math.max(ASK_AT ?? 0, Number(WORKER_ENV.EVALS_AGENT_WAIT_MS)) + 1500 + RAMP_MS + 4000 + 9000;

/** A customer with a loopback trunk, an AI on the stand-ins behind a number, and the scenario calling it. */
async function setUp(db: Awaited<ReturnType<typeof testDb>>, urls: StandInUrls): Promise<{ cid: string; scenario: EvalRunScenario }> {
  const cid = (await repos(db).customers.create({ email: `bench-evals${Date.now()}@example.test`, status: 'active', name: 'bench' })).id;
  await trunksRepo(db).create(cid, `benchev${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  const ai = await aisRepo(db).create(cid, {
    name: 'desk',
    init_prompt: 'You answer questions about the shop.',
    engine_model: 'openai.bench',
    engine_url: urls.llm,
    stt_type: STT === 'pocketsphinx' ? '' : STT,
    tts_type: TTS,
    parameter: { stt_phrases: PHRASES },
    vad_config: { stop_secs: 0.5 },
  });
  const flow = await flowsRepo(db).create({
    customer_id: cid,
    actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: ai.id, duration: 40 } }, { type: 'hangup' }]),
  } as never);
  const number = `+89957${String(Date.now() % 1_000_000).padStart(6, '0')}`;
  await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
  const input = evalScenarioInput.parse({
    name: 'opening hours',
    target: { type: 'number', target: number },
    caller: { language: 'en-US', turns: TURNS },
    checks: [{ type: 'transcript_contains', role: 'agent', text: 'open from nine' }],
  });
  const s = await evalScenariosRepo(db).create(cid, input);
  return { cid, scenario: { id: s.id, name: s.name, target: s.target, caller: s.caller, checks: s.checks } };
}

/** The vendors' stand-ins, each in its own process, and the platform's settings that reach them. */
async function startStandIns(): Promise<{ children: StandInChild[]; urls: StandInUrls; env: Record<string, string> }> {
  const settings: StandInSettings = { greeting: GREETING, answer: ANSWER, phrases: PHRASES, sttLatencyMs: 100 };
  const children = STAND_IN_PARTS.map((part) => ({ part, child: tsxChild('scripts/bench/evals/stand-ins.ts', [part, JSON.stringify(settings)], process.env, true) }));
  const lines = await Promise.allSettled(children.map((c) => firstLine<Partial<StandInUrls>>(c.child, 60_000)));
  const failed = lines.find((l): l is PromiseRejectedResult => l.status === 'rejected');
  if (failed) {
    await Promise.allSettled(children.map((c) => endChild(c.child)));
    throw failed.reason;
  }
  const urls = Object.assign({}, ...lines.map((l) => (l as PromiseFulfilledResult<Partial<StandInUrls>>).value)) as StandInUrls;
  // media-app reads the recogniser's settings from its environment when a stream is made
  const env = { DEEPGRAM_API_KEY: urls.key, DEEPGRAM_URL: urls.stt, DEEPGRAM_BASE_URL: urls.tts, EGRESS_ALLOW_CIDRS: '127.0.0.0/8' };
  Object.assign(process.env, env);
  return { children, urls, env };
}

async function main() {
  const standIns = await startStandIns();
  const p = await startPlatform({ SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256', LOG_LEVEL: 'warn', ...standIns.env });
  const db = await testDb();
  const redis = new Redis(process.env.TEST_REDIS_URL!);
  redis.on('error', () => undefined);
  const edge = { EVALS_SIP_EDGE: `127.0.0.1:${p.sipPort}`, ...WORKER_ENV };
  const ownProcess = CALLERS === 'own-process';
  const workerEnv = {
    ...process.env,
    ...edge,
    LOG_LEVEL: 'warn',
    REDIS_KEY_PREFIX: p.config.redisKeyPrefix,
    DATA_DIR: p.config.dataDir,
    DATABASE_URL: await testDatabaseUrl(),
    REDIS_URL: process.env.TEST_REDIS_URL!,
  };
  const callers = ownProcess ? tsxChild('evals/main.ts', [], workerEnv, false) : null;
  const inline = ownProcess
    ? null
    : new EvalWorker({ db, redis, eventStream: eventStreamKey(p.config.redisKeyPrefix), config: loadEvalsConfig(edge), storage: storageBackend(p.config).files, logger: pino({ level: 'warn' }) });
  inline?.start();
  const lines: string[] = [];
  let code = 1;
  try {
    const { cid, scenario } = await setUp(db, standIns.urls);
    const at = (concurrency: number, calls: number) =>
      measuredRun({ db, redis, stream: eventStreamKey(p.config.redisKeyPrefix), cid, scenario, standIns: standIns.children, callers, lines }, concurrency, calls);
    const loads = [os.loadavg()[0]!];
    const low: EvalRunRow[] = [];
    const high: EvalRunRow[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      low.push(await at(LOW, Math.ceil(LOW_CALLS / ROUNDS)));
      loads.push(os.loadavg()[0]!);
      high.push(await at(HIGH, HIGH));
      loads.push(os.loadavg()[0]!);
    }
    code = report(lines, low, high, loads);
    // each turn's stages at both loads, for reading the figures' spread after the run
    fs.writeFileSync(path.join(REPORT_DIR, 'evals-samples.json'), JSON.stringify({ low: stageSamples(answerTurns(low)), high: stageSamples(answerTurns(high)) }));
  } catch (e) {
    lines.push(`bench failed: ${e instanceof Error ? e.message : String(e)}`);
    code = 2;
  } finally {
    // each step runs whatever the others do: the children first (they end only when asked)
    const ended = await Promise.allSettled([callers ? endChild(callers) : null, ...standIns.children.map((c) => endChild(c.child)), inline?.close(), p.close()]);
    for (const e of ended) if (e.status === 'rejected') lines.push(`clean-up: ${e.reason instanceof Error ? e.reason.message : String(e.reason)}`);
    redis.disconnect();
  }
  const out = reportPath('evals');
  fs.writeFileSync(out, lines.join('\n') + '\n');
  console.log(lines.join('\n'));
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
  process.exit(code);
}

/** A vendor's stand-in process. */
interface StandInChild {
  part: StandInPart;
  child: ChildProcess;
}

interface RunContext {
  db: Awaited<ReturnType<typeof testDb>>;
  redis: Redis;
  /** the platform's event stream (its REDIS_KEY_PREFIX) */
  stream: string;
  cid: string;
  scenario: EvalRunScenario;
  standIns: StandInChild[];
  callers: ChildProcess | null;
  lines: string[];
}

/**
 * One run of `calls` calls, `concurrency` at a time, awaited through its end event; adds a line of what it cost: its
 * wall time, where the CPU went, the platform's event-loop delay, the most connections its database pool
 * had waiting, and the agent's start-up (each call's answer to ai_talk's conversation row).
 */
async function measuredRun(c: RunContext, concurrency: number, calls: number): Promise<EvalRunRow> {
  const bounds = { answerTimeoutMs: Number(WORKER_ENV.EVALS_ANSWER_TIMEOUT_MS), callMs: CALL_MS + calls * SPACING_MS, settleMs: Number(WORKER_ENV.EVALS_SETTLE_MS) };
  const standIns = c.standIns.map((s) => s.child);
  await Promise.all(standIns.map((s) => firstLine(askLine(s, 'loop'), 10_000))); // the stand-ins' loop delay counted from here
  const cpu0 = sampleCpu(c.standIns, c.callers);
  const t0 = Date.now();
  const delay = loopDelay();
  const pool = (c.db.client as { pool: { numPendingAcquires(): number } }).pool;
  let waiting = 0;
  const sampler = setInterval(() => (waiting = Math.max(waiting, pool.numPendingAcquires())), 50);
  // the platform's queries (media-app shares this knex): each statement's count
  const statements = new Map<string, number>();
  const onQuery = (q: { sql: string }) => statements.set(q.sql, (statements.get(q.sql) ?? 0) + 1);
  c.db.on('query', onQuery);
  const starts = LIST_QUERIES ? recordCallStarts(c.db) : null;
  let id = '';
  let delayText = '';
  try {
    const create = async () => (id = (await evalRunsRepo(c.db).create(c.cid, { scenarios: [c.scenario], calls, concurrency })).id);
    await awaitRunEnd(c.redis, c.cid, create, runDeadlineMs(calls, concurrency, bounds), c.stream);
  } finally {
    clearInterval(sampler);
    c.db.off('query', onQuery);
    starts?.stop();
    delayText = delay.stop();
  }
  const loops = await Promise.all(c.standIns.map(async (s) => ({ part: s.part, d: await firstLine<{ p50: number; p99: number; max: number }>(askLine(s.child, 'loop'), 10_000) })));
  const standInsLoop = loops.map((l) => `${l.part} p50 ${l.d.p50} ms, p99 ${l.d.p99} ms, max ${l.d.max} ms`).join('; ');
  const wall = Date.now() - t0;
  const queries = [...statements.values()].reduce((a, b) => a + b, 0);
  const startup = await agentStartMs(c.db, c.cid, new Date(t0));
  c.lines.push(
    `@${concurrency} (${calls} calls): ${(wall / 1000).toFixed(1)} s; agent start-up (answer to ai_talk) p50 ${pct(startup, 50)} ms, max ${pct(startup, 100)} ms (n ${startup.length}); CPU: ${cpuShares(cpu0, sampleCpu(c.standIns, c.callers), wall)}; platform event-loop delay ${delayText}; platform DB: ${queries} queries (${(queries / calls).toFixed(1)} a call), at most ${waiting} waiting for a connection; stand-ins' event-loop delay: ${standInsLoop}`,
  );
  if (LIST_QUERIES) for (const [sql, n] of [...statements].sort((a, b) => b[1] - a[1])) c.lines.push(`  ${(n / calls).toFixed(1)} a call: ${sql.slice(0, 160)}`);
  if (starts) c.lines.push(...callStartLines(starts.calls, calls));
  return (await evalRunsRepo(c.db).get(c.cid, id))!;
}

/**
 * `--queries`: the calls' starts (each INVITE to its agent listening, testkit/call-start-queries.ts):
 * the queries before listening and their waits for a pool connection, by kind, and the slowest start's
 * queries one by one.
 */
function callStartLines(starts: CallStart[], calls: number): string[] {
  const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
  const before = starts.map(beforeListening);
  const n = sorted(before.map((qs) => qs.length));
  const wait = sorted(before.map((qs) => qs.reduce((a, q) => a + (q.waitMs ?? 0), 0)));
  const listening = sorted(starts.flatMap((s) => (s.listeningMs === null ? [] : [s.listeningMs])));
  const out = [
    `  call starts (${starts.length} INVITEs, ${listening.length} agents listening): INVITE to listening p50 ${pct(listening, 50).toFixed(0)} ms, max ${pct(listening, 100).toFixed(0)} ms; queries before listening p50 ${pct(n, 50)}, max ${pct(n, 100)}; their waits for a pool connection summed p50 ${pct(wait, 50).toFixed(0)} ms, max ${pct(wait, 100).toFixed(0)} ms`,
  ];
  const kinds = new Map<string, { n: number; wait: number }>();
  for (const q of before.flat()) {
    const k = kinds.get(kindOf(q.sql)) ?? { n: 0, wait: 0 };
    kinds.set(kindOf(q.sql), { n: k.n + 1, wait: k.wait + (q.waitMs ?? 0) });
  }
  for (const [k, v] of [...kinds].sort((a, b) => b[1].n - a[1].n)) out.push(`    ${(v.n / calls).toFixed(1)} a call  ${k} (waited ${(v.wait / v.n).toFixed(0)} ms on average)`);
  const slowest = starts.filter((s) => s.listeningMs !== null).sort((a, b) => b.listeningMs! - a.listeningMs!)[0];
  if (slowest) out.push(`  the slowest start (listening at ${slowest.listeningMs!.toFixed(0)} ms):`, ...describeStart(slowest).map((l) => `    ${l}`));
  return out;
}

/** ms from each call's answer to its ai_talk conversation's row, of the customer's calls since `since`, sorted. */
async function agentStartMs(db: RunContext['db'], cid: string, since: Date): Promise<number[]> {
  const rows = (
    await db.raw(
      `select extract(epoch from (a.tm_create - c.tm_progressing)) * 1000 as ms from aicalls a join calls c on c.id = a.reference_id
        where a.customer_id = ? and a.tm_create >= ? and c.tm_progressing is not null`,
      [cid, since],
    )
  ).rows as { ms: string }[];
  return rows.map((r) => Math.round(Number(r.ms))).sort((a, b) => a - b);
}

/** The `p`th percentile (nearest rank) of sorted `xs`; 0 when empty. */
function pct(xs: number[], p: number): number {
  return xs.length === 0 ? 0 : xs[Math.min(xs.length - 1, Math.max(0, Math.ceil((p / 100) * xs.length) - 1))]!;
}

/** The report's lines after the per-run ones; 0 on PASS, 1 on FAIL. */
function report(lines: string[], low: EvalRunRow[], high: EvalRunRow[], loads: number[]): number {
  const rows = compareStages(stageSamples(answerTurns(low)), stageSamples(answerTurns(high)), TOLERANCE);
  const passed = (r: EvalRunRow) => `${r.status} ${r.results.filter((x) => x.passed).length}/${r.results.length} passed${r.error ? ` (${r.error})` : ''}`;
  lines.unshift(
    `evals at load, ${new Date().toISOString().slice(0, 10)}: ${ROUNDS} round(s) of ${LOW} (${Math.ceil(LOW_CALLS / ROUNDS)} calls, ${LOW} at a time) then ${HIGH} concurrent simulated calls, one turn each; agent: ai_talk, LLM stand-in, stt ${STT}, tts ${TTS}; callers in ${CALLERS}${CALLERS === 'own-process' ? ` at nice ${loadEvalsConfig(process.env).nice} (EVALS_NICE)` : ''}, calls started ${SPACING_MS} ms apart; question ${ASK_AT === null ? `${((1500 + RAMP_MS) / 1000).toFixed(1)} s after the greeting` : `at ${ASK_AT} ms after the answer`}`,
  );
  lines.push(`runs: ${low.map((r, i) => `@${LOW} ${passed(r)}; @${HIGH} ${passed(high[i]!)}`).join('; ')}`);
  const after = loads.slice(1).map((l, i) => `${l.toFixed(2)} after @${i % 2 ? HIGH : LOW}`);
  lines.push(`load average (1 min): ${loads[0]!.toFixed(2)} before, ${after.join(', ')}; ${os.cpus().length} cores`);
  lines.push(...[...low, ...high].flatMap(whyFailed));
  lines.push(...formatRows(rows, LOW, HIGH, TOLERANCE));
  return verdict(rows) === 'PASS' ? 0 : 1;
}

/**
 * The turns that answered the caller (a recogniser's final measured), of all the run's calls: the agent's
 * opening line is a turn too (no caller speech before it, so no stt_final_ms), and is not what is compared.
 */
function answerTurns(runs: EvalRunRow[]): Record<string, unknown>[] {
  return runs.flatMap((run) => run.results.flatMap((r) => r.turns.filter((t) => t.stt_final_ms !== null)));
}

/** What the failed calls of a run had in common: each distinct ended_by, error and failing check evidence, counted. */
function whyFailed(run: EvalRunRow): string[] {
  const why = new Map<string, number>();
  for (const r of run.results.filter((x) => !x.passed)) {
    const failing = r.checks.find((c) => !c.passed);
    const key = `ended_by ${r.ended_by}, ${r.turns.length} turn(s)${r.error ? `, ${r.error}` : ''}${failing ? `, ${failing.type}: ${failing.evidence}` : ''}`;
    why.set(key, (why.get(key) ?? 0) + 1);
  }
  return [...why].map(([k, n]) => `failed @${run.concurrency}: ${n}× ${k.slice(0, 300)}`);
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(2);
});
