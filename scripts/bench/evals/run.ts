/**
 * Evals at load (issue 56, docs/evals.md "Performance"): the same scenario run by an evals worker with
 * LOW then HIGH concurrent simulated calls (default 5 and 50) against an ai_talk agent on the stand-ins
 * (the OpenAI-compatible stand-in, pocketsphinx, espeak-ng), over SIP and RTP through the platform's edge.
 * Reports each turn stage's median and p95 (as ai_talk recorded them) at both loads, the ratio, and PASS
 * or FAIL against the tolerance (10 %: verdict.ts), with the load average beside the figures.
 *
 *   source .data/env && npx tsx scripts/bench/evals/run.ts [--low 5] [--high 50] [--tolerance 0.1]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pino from 'pino';
import { reportPath } from '../report';
import { parseActions } from '../../../core/flow';
import { flowsRepo } from '../../../core/repos/flows';
import { numbersRepo } from '../../../core/repos/numbers';
import { trunksRepo } from '../../../core/repos/trunks';
import { aisRepo } from '../../../core/repos/ais';
import { repos } from '../../../core/repos';
import { evalScenariosRepo } from '../../../core/repos/eval-scenarios';
import { evalRunsRepo, type EvalRunRow } from '../../../core/repos/eval-runs';
import { evalScenarioInput } from '../../../core/evals/schema';
import { latencyOf } from '../../../core/evals/summary';
import { testDb } from '../../../testkit/db';
import { startLlmServer, lastUser } from '../../../testkit/llm-server';
import { startPlatform } from '../../../testkit/media-app/harness';
import { loadEvalsConfig } from '../../../evals/config';
import { EvalWorker } from '../../../evals/worker';
import { storageBackend } from '../../../core/storage/backend';
import { compareStages, formatRows, verdict } from './verdict';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const LOW = arg('low', 5);
const HIGH = arg('high', 50);
const TOLERANCE = arg('tolerance', 0.1);
const ANSWER = 'We are open from nine in the morning until six in the evening.';
const PHRASES = ['what are your opening hours', 'thank you goodbye'];

async function main() {
  const llm = await startLlmServer({ respond: (req) => (lastUser(req) ? { text: ANSWER } : { text: '' }) });
  const p = await startPlatform({ SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256', LOG_LEVEL: 'warn', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
  const db = await testDb();
  const redis = new Redis(process.env.TEST_REDIS_URL!);
  redis.on('error', () => undefined);
  const config = loadEvalsConfig({ EVALS_SIP_EDGE: `127.0.0.1:${p.sipPort}`, EVALS_POLL_MS: '100', EVALS_SETTLE_MS: '10000', EVALS_ANSWER_TIMEOUT_MS: '20000' });
  const worker = new EvalWorker({ db, redis, config, storage: storageBackend(p.config).files, logger: pino({ level: 'warn' }) });
  const cid = (await repos(db).customers.create({ email: `bench-evals${Date.now()}@example.test`, status: 'active', name: 'bench' })).id;
  const lines: string[] = [];
  let pass = false;
  try {
    await trunksRepo(db).create(cid, `benchev${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const ai = await aisRepo(db).create(cid, {
      name: 'desk',
      init_prompt: 'You answer questions about the shop.',
      engine_model: 'openai.bench',
      engine_url: llm.url,
      parameter: { stt_phrases: PHRASES },
      vad_config: { stop_secs: 0.5 },
    });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: ai.id, duration: 40 } }, { type: 'hangup' }]),
    } as never);
    const number = `+89957${String(Date.now() % 1_000_000).padStart(6, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    const scenario = await evalScenariosRepo(db).create(
      cid,
      evalScenarioInput.parse({
        name: 'opening hours',
        target: { type: 'number', target: number },
        caller: { language: 'en-US', turns: [{ wait_ms: 1000 }, { say: 'What are your opening hours?' }, { wait_ms: 9000 }, { hangup: true }] },
        checks: [{ type: 'transcript_contains', role: 'agent', text: 'open from nine' }],
      }),
    );
    worker.start();
    const at = async (calls: number): Promise<EvalRunRow> => {
      const s = { id: scenario.id, name: scenario.name, target: scenario.target, caller: scenario.caller, checks: scenario.checks };
      const run = await evalRunsRepo(db).create(cid, { scenarios: [s], calls, concurrency: calls });
      for (;;) {
        const r = (await evalRunsRepo(db).get(cid, run.id))!;
        if (r.status !== 'running') return r;
        await new Promise((res) => setTimeout(res, 500));
      }
    };
    const load0 = os.loadavg()[0]!;
    const low = await at(LOW);
    const load1 = os.loadavg()[0]!;
    const high = await at(HIGH);
    const load2 = os.loadavg()[0]!;
    const rows = compareStages(latencyOf(low.results), latencyOf(high.results), TOLERANCE);
    lines.push(`evals at load, ${new Date().toISOString().slice(0, 10)}: ${LOW} then ${HIGH} concurrent simulated calls, one turn each, ai_talk on the stand-ins`);
    lines.push(
      `runs: @${LOW} ${low.status} ${low.results.filter((r) => r.passed).length}/${low.results.length} passed${low.error ? ` (${low.error})` : ''}; @${HIGH} ${high.status} ${high.results.filter((r) => r.passed).length}/${high.results.length} passed${high.error ? ` (${high.error})` : ''}`,
    );
    lines.push(`load average (1 min): ${load0.toFixed(2)} before, ${load1.toFixed(2)} after @${LOW}, ${load2.toFixed(2)} after @${HIGH}; ${os.cpus().length} cores`);
    lines.push(...whyFailed(high));
    lines.push(...formatRows(rows, LOW, HIGH, TOLERANCE));
    pass = verdict(rows) === 'PASS';
  } finally {
    await worker.close();
    await p.close();
    await llm.close();
    redis.disconnect();
  }
  const out = reportPath('evals');
  fs.writeFileSync(out, lines.join('\n'));
  console.log(lines.join('\n'));
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
  process.exit(pass ? 0 : 1);
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
