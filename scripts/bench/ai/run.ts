/**
 * AI turn latency on a live call: sipp calls a number whose flow runs ai_talk against the local
 * OpenAI-compatible server; sipp plays a spoken question every few seconds; for each question the
 * latency is from the end of the caller's speech to the first agent audio on the caller's RTP sink
 * (end-of-turn wait + STT + LLM first sentence + TTS + RTP). Same-run baselines: espeak-ng
 * synthesis of the answer alone (the TTS part), and the short end-of-turn wait (min_endpointing_delay_ms)
 * the turn detection waits after a finished sentence. Also the platform's own per-stage breakdown
 * (each assistant aimessage's metadata.latency, docs/ai.md "Turn-taking").
 *
 *   source .data/env && npx tsx scripts/bench/ai/run.ts [--calls 2] [--turns 5]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { reportPath } from '../report';
import { parseActions } from '../../../core/flow';
import { flowsRepo } from '../../../core/repos/flows';
import { numbersRepo } from '../../../core/repos/numbers';
import { trunksRepo } from '../../../core/repos/trunks';
import { aisRepo } from '../../../core/repos/ais';
import { repos } from '../../../core/repos';
import { EspeakProvider } from '../../../media-engine/tts';
import { testDb } from '../../../testkit/db';
import { startLlmServer, lastUser } from '../../../testkit/llm-server';
import { killAllSipp, sipp, startPlatform, type Platform } from '../../../testkit/media-app/harness';
import type { Knex } from 'knex';
import { aiCallerScenario, speechPcap, TimedSink } from '../../../testkit/ai/audio';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CALLS = arg('calls', 2);
const TURNS = arg('turns', 5);
const MIN_DELAY_MS = 500;
const LEAD_MS = 200;
const GAP_MS = 4500;
const ANSWER = 'Okay, we are open from nine to six.';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ai-'));
  const pcap = path.join(dir, 'q.pcap');
  const qMs = speechPcap('What are your opening hours?', pcap, { leadMs: LEAD_MS, trailMs: 1500 });
  const llm = await startLlmServer({ respond: (req) => (lastUser(req) ? { text: ANSWER } : { text: '' }) });
  const p = await startPlatform({ SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256', LOG_LEVEL: 'warn', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
  const db = await testDb();
  const latencies: number[] = [];
  const customers: string[] = [];
  try {
    for (let c = 0; c < CALLS; c++) {
      const cid = (await repos(db).customers.create({ email: `bench${Date.now()}${c}@example.test`, status: 'active', name: 'bench' })).id;
      customers.push(cid);
      latencies.push(...(await oneCall(db, p, cid, c, llm.url, { pcap, qMs })));
    }
    // the platform's own breakdown of the answered turns (the greeting has no caller speech)
    await new Promise((r) => setTimeout(r, 1000));
  } finally {
    killAllSipp();
    await p.close();
    await llm.close();
  }
  const synth = await synthesisBaseline(dir);
  fs.rmSync(dir, { recursive: true, force: true });
  if (!latencies.length) throw new Error('no turn was answered');
  const lines = await report(db, customers, latencies, synth);
  const out = reportPath('ai');
  fs.writeFileSync(out, lines.join('\n'));
  console.log(lines.join('\n'));
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
  process.exit(0);
}

/** One call of TURNS questions to an ai_talk flow on its own trunk and number: each answered turn's latency. */
async function oneCall(db: Knex, p: Platform, cid: string, c: number, llmUrl: string, q: { pcap: string; qMs: number }): Promise<number[]> {
  const { pcap, qMs } = q;
  await trunksRepo(db).create(cid, `bench${Date.now()}${c}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  const ai = await aisRepo(db).create(cid, {
    name: 'bench',
    engine_url: llmUrl,
    engine_model: 'openai.bench',
    parameter: { stt_phrases: ['what are your opening hours', 'thank you'], min_endpointing_delay_ms: MIN_DELAY_MS },
  });
  const plays = Array.from({ length: TURNS }, (_, i) => ({ atMs: 1000 + i * (qMs + GAP_MS), pcap }));
  const total = plays.at(-1)!.atMs + qMs + GAP_MS;
  const flow = await flowsRepo(db).create({
    customer_id: cid,
    actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_id: ai.id, assistance_type: 'ai', duration: Math.ceil(total / 1000) } }, { type: 'hangup' }]),
  } as never);
  const number = `+89912${String(c).padStart(6, '0')}${Date.now() % 1000}`;
  await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
  const sink = await TimedSink.open();
  const r = await sipp(
    aiCallerScenario(`${number}@127.0.0.1:${p.sipPort}`, sink.port, plays, total + 20_000),
    [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', `${Math.ceil(total / 1000) + 30}s`],
    { killAfterMs: total + 40_000 },
  ).done;
  sink.close();
  if (r.code !== 0) throw new Error(`sipp failed: ${r.errors.slice(0, 500)}`);
  // the sink's first packet is the answer (the platform sends from its 200 OK; sipp's pauses start at its ACK)
  const t0 = sink.packets[0]!.at;
  const voiced = sink.voicedTimes();
  const latencies: number[] = [];
  for (const play of plays) {
    const speechEnd = t0 + play.atMs + LEAD_MS + qMs;
    const first = voiced.find((t) => t > speechEnd);
    if (first !== undefined && first - speechEnd < GAP_MS) latencies.push(first - speechEnd);
  }
  return latencies;
}

/** The baseline: synthesis of the answer alone (uncached: a new directory each time), ms. */
async function synthesisBaseline(dir: string): Promise<number[]> {
  const synth: number[] = [];
  for (let i = 0; i < 8; i++) {
    const out = fs.mkdtempSync(path.join(dir, 'tts-'));
    const t = performance.now();
    await new EspeakProvider({ outDir: out }).synthesize(ANSWER, { language: 'en-US' });
    synth.push(performance.now() - t);
  }
  return synth;
}

/** The report's lines: turn latency against the baselines, and the platform's per-stage breakdown of the answers. */
async function report(db: Knex, customers: string[], latencies: number[], synth: number[]): Promise<string[]> {
  const rows = (await db('aimessages').whereIn('customer_id', customers).where({ role: 'assistant' })) as { metadata: { latency?: Record<string, unknown> } }[];
  const stages = ['end_of_turn_wait_ms', 'stt_final_ms', 'llm_first_token_ms', 'tts_first_byte_ms', 'first_rtp_ms'];
  const byStage = new Map(
    stages.map((k) => [
      k,
      rows
        .map((r) => r.metadata?.latency)
        .filter((l) => l && l.end_of_turn_rule)
        .map((l) => l![k])
        .filter((v): v is number => typeof v === 'number'),
    ]),
  );
  const row = (name: string, xs: number[]) => `| ${name} | ${xs.length} | ${pct(xs, 50).toFixed(0)} | ${pct(xs, 99).toFixed(0)} |`;
  const ratio50 = pct(latencies, 50) / pct(synth, 50);
  return [
    '# Benchmark: AI turn latency (ai_talk)',
    '',
    `Command: \`source .data/env && npx tsx scripts/bench/ai/run.ts --calls ${CALLS} --turns ${TURNS}\` (${new Date().toISOString()}, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)})`,
    '',
    "Turn latency = end of the caller's speech (sipp pcap) → first agent audio on the caller's RTP sink, with the local",
    'OpenAI-compatible server (streaming, no model delay), pocketsphinx with a phrase list, espeak-ng TTS, min_endpointing_delay_ms ' + MIN_DELAY_MS + '.',
    '',
    '| measure | n | p50 ms | p99 ms |',
    '|---|---|---|---|',
    row('turn latency on the call', latencies),
    row('baseline: espeak-ng synthesis of the answer alone', synth),
    `| baseline: end-of-turn short wait (min_endpointing_delay_ms) | - | ${MIN_DELAY_MS} | ${MIN_DELAY_MS} |`,
    ...stages.filter((k) => byStage.get(k)!.length).map((k) => row(`platform's breakdown (aimessage metadata.latency): ${k}`, byStage.get(k)!)),
    '',
    `Ratio turn latency p50 / TTS synthesis p50: **${ratio50.toFixed(1)}×**; turn latency p50 minus the short wait: ${(pct(latencies, 50) - MIN_DELAY_MS).toFixed(0)} ms.`,
    `Answered turns: ${latencies.length} of ${CALLS * TURNS}.`,
    '',
  ];
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
