/**
 * Turn-taking on speakerphone calls (docs/ai.md "Turn-taking"): sipp places `--calls` concurrent
 * calls to a number whose flow runs ai_talk (Silero VAD, the echo guard, pocketsphinx with a phrase
 * list, the LLM stand-in at 150 ms to its first token, espeak-ng speaking); each call's audio goes to
 * a speakerphone on loopback (testkit/ai/echo-phone.ts) that plays the agent back 150 ms late at
 * -6 dB (`--echo-gain`, 0 for none) and says, every turn, "Tell me a story." and then, over the agent's 3-sentence reply, nothing
 * (echo only), a backchannel ("okay", "yeah", "right") or a stop word ("stop", "wait"), in turn.
 *
 * Reported: caller stops → first agent audio (p50/p95, at the phone); the platform's own share of it
 * (first_rtp_ms minus the end-of-turn wait, the LLM's first token and the first sentence's
 * synthesis, from the aimessages' latency); self-interruptions (a reply cut in an echo-only turn, or
 * a caller turn with words the caller never said); backchannels that cut the reply; stop words that
 * did; the time from the end of a stop word to the agent's last audio (p50/p95).
 *
 *   source .data/env && npx tsx scripts/bench/ai/turn-taking.ts [--calls 5] [--turns 10]
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
import { testDb } from '../../../testkit/db';
import { startLlmServer, lastUser, type LlmRequest } from '../../../testkit/llm-server';
import { killAllSipp, sipp, startPlatform } from '../../../testkit/media-app/harness';
import { aiCallerScenario } from '../../../testkit/ai/audio';
import { EchoPhone, speechSamples } from '../../../testkit/ai/echo-phone';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CALLS = arg('calls', 5);
const TURNS = arg('turns', 10);
/** the echo's level (0: no echo, the baseline of the interruption figures) */
const ECHO_GAIN = arg('echo-gain', 0.5);
const LLM_TTFT_MS = 150;
const MIN_DELAY_MS = 400;
const PERIOD_MS = 11_000;
const INTERJECT_AFTER_MS = 3000;
const KINDS = ['echo', 'backchannel', 'stop'] as const;
const BACKCHANNELS = ['okay', 'yeah', 'right'];
const STOPS = ['stop', 'wait'];
const PHRASES = ['tell me a story', ...BACKCHANNELS, ...STOPS];

const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};

/** The reply to the n-th "tell me a story" of a conversation (unique, so each turn's reply is known). */
const story = (n: number) => `Here is part ${n} of the story. This is the first sentence of it. This is the second sentence of it. And this is the last sentence of part ${n}.`;

function respond(req: LlmRequest) {
  if (req.messages.at(-1)?.role === 'tool') return { text: '' };
  const user = lastUser(req);
  if (!user) return { text: '' };
  const n = req.messages.filter((m) => m.role === 'user' && typeof m.content === 'string' && m.content.includes('story')).length;
  return user.includes('story') ? { text: story(n) } : { text: '' };
}

interface Turn {
  kind: (typeof KINDS)[number];
  question: ReturnType<EchoPhone['say']>;
  word: string | null;
  interjection: ReturnType<EchoPhone['say']> | null;
}

async function main() {
  const llm = await startLlmServer({ respond, firstChunkDelayMs: LLM_TTFT_MS });
  const p = await startPlatform({ SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256', LOG_LEVEL: 'warn', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
  const db = await testDb();
  const question = speechSamples('Tell me a story.');
  const words = new Map([...BACKCHANNELS, ...STOPS].map((w) => [w, speechSamples(w.charAt(0).toUpperCase() + w.slice(1) + '.', { speed: 150, pitch: 70 })]));
  const loads: number[] = [];
  const loadTimer = setInterval(() => loads.push(os.loadavg()[0]!), 5000);
  const totalMs = 2000 + TURNS * PERIOD_MS;
  const results: { cid: string; phone: EchoPhone; turns: Turn[] }[] = [];
  try {
    await Promise.all(
      Array.from({ length: CALLS }, async (_, c) => {
        const cid = (await repos(db).customers.create({ email: `tt${Date.now()}${c}@example.test`, status: 'active', name: 'bench' })).id;
        await trunksRepo(db).create(cid, `tt${Date.now()}${c}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
        const ai = await aisRepo(db).create(cid, {
          name: 'bench',
          engine_url: llm.url,
          engine_model: 'openai.bench',
          parameter: { stt_phrases: PHRASES, min_endpointing_delay_ms: MIN_DELAY_MS },
          vad_config: { engine: 'silero' },
        });
        const flow = await flowsRepo(db).create({
          customer_id: cid,
          actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_id: ai.id, assistance_type: 'ai', duration: Math.ceil(totalMs / 1000) + 2 } }, { type: 'hangup' }]),
        } as never);
        const number = `+89915${String(c).padStart(6, '0')}${Date.now() % 1000}`;
        await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
        const phone = await EchoPhone.open({ echoDelayMs: 150, echoGain: ECHO_GAIN });
        const turns: Turn[] = [];
        const timers: NodeJS.Timeout[] = [];
        for (let i = 0; i < TURNS; i++) {
          const kind = KINDS[(i + c) % KINDS.length]!;
          const at = 2000 + i * PERIOD_MS;
          const t: Turn = { kind, question: { startedAt: () => null, endedAt: () => null }, word: null, interjection: null };
          turns.push(t);
          timers.push(setTimeout(() => (t.question = phone.say(question)), at));
          if (kind !== 'echo') {
            const list = kind === 'stop' ? STOPS : BACKCHANNELS;
            t.word = list[i % list.length]!;
            const w = words.get(t.word)!;
            timers.push(setTimeout(() => (t.interjection = phone.say(w)), at + INTERJECT_AFTER_MS));
          }
        }
        const r = await sipp(
          aiCallerScenario(`${number}@127.0.0.1:${p.sipPort}`, phone.port, [], totalMs + 30_000),
          [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', `${Math.ceil(totalMs / 1000) + 40}s`],
          {
            killAfterMs: totalMs + 50_000,
          },
        ).done;
        timers.forEach(clearTimeout);
        phone.close();
        if (r.code !== 0) throw new Error(`sipp failed: ${r.errors.slice(0, 500)}`);
        results.push({ cid, phone, turns });
      }),
    );
    await new Promise((r) => setTimeout(r, 1500));
  } finally {
    clearInterval(loadTimer);
    killAllSipp();
    await p.close();
    await llm.close();
  }

  const latency: number[] = [];
  const own: number[] = [];
  const stopDelay: number[] = [];
  let echoTurns = 0;
  let selfInterruptions = 0;
  let backchannels = 0;
  let backchannelCuts = 0;
  let stops = 0;
  let stopCuts = 0;
  let foreignWords = 0;
  for (const { cid, phone, turns } of results) {
    const voiced = phone.voicedTimes();
    const aicall = (await db('aicalls').where({ customer_id: cid }))[0] as { id: string } | undefined;
    const msgs = aicall ? ((await db('aimessages').where({ aicall_id: aicall.id }).orderBy('tm_create')) as { role: string; content: string; metadata: { latency?: Record<string, unknown> } }[]) : [];
    if (process.env.BENCH_DEBUG)
      console.log(
        JSON.stringify(msgs.map((m) => [m.role, m.content, m.metadata?.latency?.interrupted])),
        JSON.stringify(turns.map((t) => [t.kind, t.word, t.question.endedAt(), t.interjection?.endedAt()])),
        JSON.stringify(voiced.filter((_, i) => i % 25 === 0).map(Math.round)),
      );
    const said = new Set(PHRASES);
    foreignWords += msgs.filter((m) => m.role === 'user' && !said.has(m.content.trim())).length;
    for (const m of msgs) {
      const l = m.metadata?.latency;
      if (m.role !== 'assistant' || !l || !l.end_of_turn_rule || typeof l.first_rtp_ms !== 'number') continue;
      const parts = [l.end_of_turn_wait_ms, l.llm_first_token_ms, l.tts_first_byte_ms];
      if (parts.every((x) => typeof x === 'number')) own.push(l.first_rtp_ms - (parts as number[]).reduce((a, b) => a + b, 0));
    }
    turns.forEach((t, i) => {
      const qEnd = t.question.endedAt();
      if (qEnd === null) return;
      const next = turns[i + 1]?.question.startedAt() ?? Infinity;
      const first = voiced.find((v) => v > qEnd && v < next);
      if (first !== undefined) latency.push(first - qEnd);
      const reply = msgs.find((m) => m.role === 'assistant' && m.content === story(i + 1));
      const cut = reply?.metadata.latency?.interrupted === true;
      if (t.kind === 'echo') {
        echoTurns++;
        if (cut) selfInterruptions++;
      } else if (t.kind === 'backchannel') {
        backchannels++;
        if (cut) backchannelCuts++;
      } else {
        stops++;
        if (cut) stopCuts++;
        const wEnd = t.interjection?.endedAt() ?? null;
        if (wEnd !== null && cut) {
          const last = voiced.filter((v) => v > wEnd - 2000 && v < next).at(-1);
          if (last !== undefined) stopDelay.push(Math.max(0, last - wEnd));
        }
      }
    });
  }
  const load = loads.length ? Math.max(...loads) : os.loadavg()[0]!;
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : 'n/a');
  const lines = [
    '## AI turn-taking on speakerphone calls',
    '',
    `Command: \`source .data/env && npx tsx scripts/bench/ai/turn-taking.ts --calls ${CALLS} --turns ${TURNS} --echo-gain ${ECHO_GAIN}\` (${new Date().toISOString()}, ${os.cpus().length} cores, 1-min load up to ${load.toFixed(1)}, shared machine)`,
    '',
    `Stand-ins: LLM ${LLM_TTFT_MS} ms to first token; voice espeak-ng (local); STT pocketsphinx (phrase list); short wait ${MIN_DELAY_MS} ms; echo 150 ms at gain ${ECHO_GAIN}.`,
    '',
    `- caller stops → agent audio: p50 ${f(pct(latency, 50))} ms, p95 ${f(pct(latency, 95))} ms (${latency.length} turns)`,
    `- platform's own share (first_rtp − end-of-turn wait − LLM first token − first sentence synthesis): p50 ${f(pct(own, 50))} ms, p99 ${f(pct(own, 99))} ms (${own.length} replies)`,
    `- self-interruptions: ${selfInterruptions} of ${echoTurns} echo-only turns cut; caller turns with words never said: ${foreignWords} (all ${TURNS * CALLS} turns on speakerphone echo)`,
    `- backchannels that cut the reply: ${backchannelCuts} of ${backchannels} (${f((100 * backchannelCuts) / Math.max(1, backchannels))} %)`,
    `- stop words that cut the reply: ${stopCuts} of ${stops} (${f((100 * stopCuts) / Math.max(1, stops))} %)`,
    `- end of the stop word → agent's last audio: p50 ${f(pct(stopDelay, 50))} ms, p95 ${f(pct(stopDelay, 95))} ms`,
  ];
  const out = reportPath('ai-turn-taking');
  fs.writeFileSync(out, lines.join('\n'));
  console.log(lines.join('\n'));
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
  process.exit(0);
}

main().catch((e: Error) => {
  console.error(e);
  process.exit(1);
});
