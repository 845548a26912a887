/**
 * Turn-taking on speakerphone calls (docs/ai.md "Turn-taking"): sipp places `--calls` concurrent
 * calls to a number whose flow runs ai_talk (Silero VAD, the echo guard, the recogniser `--stt`, the
 * LLM stand-in at 150 ms to its first token, the voice `--tts`); each call's audio goes to
 * a speakerphone on loopback (testkit/ai/echo-phone.ts) that plays the agent back 150 ms late at
 * -6 dB (`--echo-gain`, 0 for none) and says, every turn, "Tell me a story." and then, over the agent's 3-sentence reply, nothing
 * (echo only), a backchannel ("okay", "yeah", "right") or a stop word ("stop", "wait"), in turn.
 * A call's first question comes 2 s after the last call was placed (its phone's clock: the calls' questions
 * 50 ms apart, as sipp placed them): the figures are of calls up at once, not of call set-ups beside them.
 *
 * The phone dates what its caller says as a live talker's phone would: a packet sent carries the 20 ms said
 * before it (the caller stops up to a packet before the platform can have the end); the agent's audio
 * is heard as its packet comes.
 *
 * Reported: caller stops → first agent audio (p50/p95, at the phone); the platform's own share of it
 * (first_rtp_ms minus the end-of-turn wait, the LLM's first token and the first sentence's
 * synthesis, from the aimessages' latency); self-interruptions (a reply cut in an echo-only turn, or
 * a caller turn with words the caller never said); backchannels that cut the reply; stop words that
 * did; the time from the end of a stop word to the agent's last audio (p50/p95); RTP lost on the
 * way to the phones (sequence gaps).
 *
 * Three processes: the platform (platform-process.ts), the vendor stand-ins (stand-ins-process.ts) and
 * this one with the phones, so that neither the recognisers' bursts nor the phones are counted as the
 * platform's time and the phones answer every packet on time. Each round also prints how many turns
 * passed each stage (said, recognised, answered, sent, heard) and each process's CPU.
 *
 * `--stt pocketsphinx` (default, with a phrase list) or `deepgram`: the Deepgram stand-in on loopback
 * (testkit/speech/deepgram-phrases.ts) recognising the bench's phrases from templates of them, with
 * Deepgram's interim results (as the words are recognised), endpointing (the AI's `--min-delay`, at least 100 ms there) and UtteranceEnd,
 * each result `--stt-latency` ms (default 100) after its audio; `cartesia`, `elevenlabs`: their
 * stand-ins (testkit/speech/tone-stt.ts) recognising the same way, each with its own end of utterance. `--tts espeak-ng` (default, local) or
 * a cloud voice's stand-in (`elevenlabs`, `cartesia`, `deepgram`, `openai`, testkit/vendors/) at
 * `--tts-first-byte` ms (default 100). `--baseline <n>`: first the same run with n calls (the load
 * comparison: `--calls 100 --baseline 10`). `--min-delay` (default 400): the AI's
 * min_endpointing_delay_ms, which the platform also asks Deepgram for as its `endpointing`.
 *
 *   source .data/env && npx tsx scripts/bench/ai/turn-taking.ts [--calls 5] [--turns 10] [--echo-gain 0.5]
 *     [--aec off] [--stt deepgram] [--stt-latency 100] [--stt-max-distance 14] [--tts elevenlabs] [--tts-first-byte 100] [--baseline 10] [--min-delay 400]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { reportPath } from '../report';
import { parseActions } from '../../../core/flow';
import { flowsRepo } from '../../../core/repos/flows';
import { numbersRepo } from '../../../core/repos/numbers';
import { trunksRepo } from '../../../core/repos/trunks';
import { aisRepo } from '../../../core/repos/ais';
import { repos } from '../../../core/repos';
import { testDb } from '../../../testkit/db';
import type { Knex } from 'knex';
import { killAllSipp, sippCalls } from '../../../testkit/media-app/harness';
import { portBlock } from '../../../testkit/ports';
import { startPlatformProcess, type PlatformProcess } from './platform-process';
import { startStandInsProcess, story, VOICES, type StandInsProcess } from './stand-ins-process';
import { figureLines, fmt, pct, type Figures } from './turn-taking-figures';

/** what every story reply starts with, whatever its number */
const STORY_HEAD = story(0).slice(0, story(0).indexOf('0'));
import { aiCallerScenario } from '../../../testkit/ai/audio';
import { EchoPhone, speechSamples } from '../../../testkit/ai/echo-phone';
import { DEFAULT_MAX_DISTANCE } from '../../../testkit/speech/phrase-recogniser';

const argStr = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const arg = (name: string, def: number) => Number(argStr(name, String(def)));
const CALLS = arg('calls', 5);
const TURNS = arg('turns', 10);
/** the echo's level (0: no echo, the baseline of the interruption figures) */
const ECHO_GAIN = arg('echo-gain', 0.5);
/** `--aec off`: the echo guard alone (the canceller's baseline; it is on by default, and off with no echo) */
const AEC = argStr('aec', 'on') !== 'off';
const STT = argStr('stt', 'pocketsphinx');
const STT_LATENCY_MS = arg('stt-latency', 100);
/**
 * The stand-in recogniser's acceptance distance (testkit/speech/phrase-recogniser.ts, default 14, set on
 * clean espeak-ng speech). Over the canceller's residue on a speakerphone, "wait" lands at 14.7-15.7 from
 * its template (nearest, every time) and is heard as nothing; the residue's own fragments stay at 24 and
 * over. `--stt-max-distance 18` accepts the word as a vendor's recogniser would; the default keeps 14.
 */
const STT_MAX_DISTANCE = arg('stt-max-distance', DEFAULT_MAX_DISTANCE);
const TTS = argStr('tts', 'espeak-ng');
const TTS_FIRST_BYTE_MS = arg('tts-first-byte', 100);
const BASELINE = arg('baseline', 0);
const LLM_TTFT_MS = 150;
/** the AI's min_endpointing_delay_ms (the VAD's short wait and Deepgram's `endpointing`) */
const MIN_DELAY_MS = arg('min-delay', 400);
const PERIOD_MS = 11_000;
/**
 * ai_talk runs this long past the phone's last turn: the phone's clock (the platform's packets) falls
 * behind the wall clock under load (a late answer, a stream stalled for seconds), and a session ended
 * by its duration mid-reply would count as that reply cut
 */
const END_MARGIN_S = 60;
const INTERJECT_AFTER_MS = 3000;
const KINDS = ['echo', 'backchannel', 'stop'] as const;
const BACKCHANNELS = ['okay', 'yeah', 'right'];
const STOPS = ['stop', 'wait'];
const PHRASES = ['tell me a story', ...BACKCHANNELS, ...STOPS];

interface Turn {
  kind: (typeof KINDS)[number];
  question: ReturnType<EchoPhone['say']>;
  word: string | null;
  interjection: ReturnType<EchoPhone['say']> | null;
}

interface Call {
  cid: string;
  phone: EchoPhone;
  turns: Turn[];
}

/** Each call's customer, trunk, AI, flow (ai_talk for the whole round) and number, set up before the calls: the platform's database work during them is its own. */
async function setUpNumbers(db: Knex, calls: number, llmUrl: string, totalMs: number): Promise<{ cid: string; number: string }[]> {
  const numbers: { cid: string; number: string }[] = [];
  for (let c = 0; c < calls; c++) {
    const cid = (await repos(db).customers.create({ email: `tt${Date.now()}${c}@example.test`, status: 'active', name: 'bench' })).id;
    await trunksRepo(db).create(cid, `tt${Date.now()}${c}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const ai = await aisRepo(db).create(cid, {
      name: 'bench',
      engine_url: llmUrl,
      engine_model: 'openai.bench',
      stt_type: STT === 'pocketsphinx' ? '' : STT,
      tts_type: TTS === 'espeak-ng' ? '' : TTS,
      parameter: { stt_phrases: PHRASES, min_endpointing_delay_ms: MIN_DELAY_MS, echo_cancellation: AEC && ECHO_GAIN > 0 },
      vad_config: { engine: 'silero' },
    });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_id: ai.id, assistance_type: 'ai', duration: Math.ceil(totalMs / 1000) + END_MARGIN_S } }, { type: 'hangup' }]),
    } as never);
    const number = `+89915${String(c).padStart(6, '0')}${Date.now() % 1000}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    numbers.push({ cid, number });
  }
  return numbers;
}

/** The round's own measures, started together: the load, this process's event-loop delay and stalls, each process's CPU. `stop()` ends their timers. */
function startMonitors(p: PlatformProcess, v: StandInsProcess) {
  const loads: number[] = [os.loadavg()[0]!];
  const loadTimer = setInterval(() => loads.push(os.loadavg()[0]!), 5000);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  // this process's event-loop stalls (a 10 ms timer ≥ 60 ms late), as [start, end] in performance.now()
  const stalls: [number, number][] = [];
  let lastTick = performance.now();
  const stallTimer = setInterval(() => {
    const now = performance.now();
    if (now - lastTick >= 70) stalls.push([lastTick + 10, now]);
    lastTick = now;
  }, 10);
  const cpu0 = { platform: p.cpuSeconds(), standIns: v.cpuSeconds(), bench: process.cpuUsage(), at: performance.now() };
  return {
    stalls,
    stop: () => {
      clearInterval(loadTimer);
      clearInterval(stallTimer);
      loop.disable();
    },
    /** the figures of the whole round, read once it has ended */
    read: (): Pick<Figures, 'load' | 'benchLoopP99' | 'cpu'> => {
      const wallS = (performance.now() - cpu0.at) / 1000;
      const benchCpu = process.cpuUsage(cpu0.bench);
      return {
        load: [Math.min(...loads), Math.max(...loads)],
        benchLoopP99: loop.percentile(99) / 1e6,
        cpu: { platform: (100 * (p.cpuSeconds() - cpu0.platform)) / wallS, bench: (100 * (benchCpu.user + benchCpu.system)) / 1e6 / wallS, standIns: (100 * (v.cpuSeconds() - cpu0.standIns)) / wallS },
      };
    },
  };
}

/**
 * Every call's phone first (its port goes in the call's SDP), its turns on its own packet clock: under
 * load a late call setup or a stalled stream would bunch the turns up (a question over the last reply,
 * a stop word in the next turn) and count one turn's outcome as another's.
 */
async function openPhones(numbers: { cid: string }[], leadMs: number, question: Int16Array, words: Map<string, Int16Array>): Promise<Call[]> {
  const results: Call[] = [];
  for (const [c, { cid }] of numbers.entries()) {
    const phone = await EchoPhone.open({ echoDelayMs: 150, echoGain: ECHO_GAIN });
    const turns: Turn[] = [];
    for (let i = 0; i < TURNS; i++) {
      const kind = KINDS[(i + c) % KINDS.length]!;
      const at = leadMs + i * PERIOD_MS;
      const t: Turn = { kind, question: phone.say(question, at), word: null, interjection: null };
      turns.push(t);
      if (kind !== 'echo') {
        const list = kind === 'stop' ? STOPS : BACKCHANNELS;
        t.word = list[i % list.length]!;
        t.interjection = phone.say(words.get(t.word)!, at + INTERJECT_AFTER_MS);
      }
    }
    results.push({ cid, phone, turns });
  }
  return results;
}

/** ONE sipp places every call, 50 ms apart, each to its number with its phone's port (harness sippCalls); the calls it did not end cleanly, a line of its error log each. */
async function placeCalls(p: PlatformProcess, numbers: { number: string }[], results: Call[], totalMs: number): Promise<string[]> {
  const calls = numbers.length;
  const r = await sippCalls(
    aiCallerScenario(`[field0]@127.0.0.1:${p.sipPort}`, '[field1]', [], totalMs + (END_MARGIN_S + 30) * 1000),
    `127.0.0.1:${p.sipPort}`,
    numbers.map(({ number }, c) => [number, results[c]!.phone.port]),
    { rate: 20, timeoutMs: totalMs + (END_MARGIN_S + 40) * 1000 + calls * 50, killAfterMs: totalMs + (END_MARGIN_S + 50) * 1000 + calls * 50 },
  ).done;
  for (const { phone } of results) phone.close();
  // a failed call is counted (a line of sipp's error log each), and its turns still measured (what it got of them)
  const failures: string[] = [];
  if (r.code !== 0) failures.push(...r.errors.split('\n').filter((l) => /\d: /.test(l)));
  if (r.code !== 0 && !failures.length) failures.push(`sipp exited ${r.code}: ${r.stderr.slice(0, 200)}`);
  if (r.code !== 0 && process.env.BENCH_DEBUG) console.log('sipp-failed', r.errors.slice(0, 1500));
  return failures;
}

/** `calls` concurrent calls of TURNS turns each, started 50 ms apart (their numbers set up first). */
async function round(p: PlatformProcess, v: StandInsProcess, calls: number): Promise<Figures> {
  const db = await testDb();
  const question = speechSamples('Tell me a story.');
  const words = new Map([...BACKCHANNELS, ...STOPS].map((w) => [w, speechSamples(w.charAt(0).toUpperCase() + w.slice(1) + '.', { speed: 150, pitch: 70 })]));
  // every call's first question once every call is placed (sipp places 20 a second) and 2 s more: the
  // latencies of calls up at once, not of call set-ups beside them (post-dial delay is the SIP bench's)
  const leadMs = 2000 + calls * 50;
  const totalMs = leadMs + TURNS * PERIOD_MS;
  const numbers = await setUpNumbers(db, calls, v.llmUrl, totalMs);
  const monitors = startMonitors(p, v);
  const results: Call[] = [];
  const failures: string[] = [];
  try {
    results.push(...(await openPhones(numbers, leadMs, question, words)));
    failures.push(...(await placeCalls(p, numbers, results, totalMs)));
    await new Promise((r) => setTimeout(r, 1500));
  } finally {
    monitors.stop();
  }
  const f: Figures = {
    calls,
    latency: [],
    laterLatency: [],
    lessVendors: [],
    own: [],
    phoneShare: [],
    stopDelay: [],
    echoTurns: 0,
    selfInterruptions: 0,
    backchannels: 0,
    backchannelCuts: 0,
    stops: 0,
    stopCuts: 0,
    foreignWords: 0,
    rtp: { received: 0, lost: 0 },
    failures,
    stages: { end_of_turn_wait_ms: [], llm_first_token_ms: [], tts_first_byte_ms: [] },
    funnel: { said: 0, recognised: 0, replied: 0, sent: 0, heard: 0 },
    unrecognised: { count: 0, packetPause: 0, phoneStall: 0 },
    ...monitors.read(),
  };
  for (const call of results) await measureCall(f, db, call, monitors.stalls);
  return f;
}

interface Message {
  role: string;
  content: string;
  tm_create: Date | string;
  metadata: { latency?: Record<string, unknown> };
}

/** One call's figures into `f`: its RTP, the platform's stages of its replies, and each of its turns (measureTurn). */
async function measureCall(f: Figures, db: Knex, { cid, phone, turns }: Call, stalls: [number, number][]): Promise<void> {
  const voiced = phone.voicedTimes();
  const rtp = phone.rtpStats();
  f.rtp.received += rtp.received;
  f.rtp.lost += rtp.lost;
  const aicall = (await db('aicalls').where({ customer_id: cid }))[0] as { id: string } | undefined;
  const msgs = aicall ? ((await db('aimessages').where({ aicall_id: aicall.id }).orderBy('tm_create')) as Message[]) : [];
  if (process.env.BENCH_DEBUG) {
    const calls = (await db('calls').where({ customer_id: cid })) as { status: string; hangup_reason: string; direction: string }[];
    console.log('calls', JSON.stringify(calls.map((c) => [c.direction, c.status, c.hangup_reason])), 'aicall', JSON.stringify(aicall ?? null), 'rtp', JSON.stringify(rtp));
  }
  if (process.env.BENCH_DEBUG)
    console.log(
      JSON.stringify(msgs.map((m) => [m.role, m.content, m.metadata?.latency])),
      JSON.stringify(turns.map((t) => [t.kind, t.word, t.question.endedAt(), t.interjection?.endedAt()])),
      JSON.stringify(voiced.filter((_, i) => i % 25 === 0).map(Math.round)),
    );
  const said = new Set(PHRASES);
  f.foreignWords += msgs.filter((m) => m.role === 'user' && !said.has(m.content.trim())).length;
  for (const m of msgs) {
    const l = m.metadata?.latency;
    if (m.role !== 'assistant' || !l || !l.end_of_turn_rule || typeof l.first_rtp_ms !== 'number') continue;
    const parts = [l.end_of_turn_wait_ms, l.llm_first_token_ms, l.tts_first_byte_ms];
    if (parts.every((x) => typeof x === 'number')) f.own.push(l.first_rtp_ms - (parts as number[]).reduce((a, b) => a + b, 0));
    for (const k of Object.keys(f.stages) as (keyof Figures['stages'])[]) if (typeof l[k] === 'number') f.stages[k].push(l[k]);
  }
  turns.forEach((_, i) => measureTurn(f, { turns, i, voiced, msgs, stalls }));
}

/** Turn i of a call into `f`: through the funnel, its latency at the phone and the platform's share, and what its interjection (if any) cut. */
function measureTurn(f: Figures, c: { turns: Turn[]; i: number; voiced: number[]; msgs: Message[]; stalls: [number, number][] }): void {
  const { turns, i, voiced, msgs, stalls } = c;
  const t = turns[i]!;
  const qEnd = t.question.endedAt();
  if (qEnd === null) return;
  const next = turns[i + 1]?.question.startedAt() ?? Infinity;
  const first = voiced.find((v) => v > qEnd && v < next);
  // the reply stored after this question and before the next one (by time: a question the recogniser
  // missed shifts the stand-in's numbering of the stories, so the n-th story is not the n-th turn's)
  const wall = (t: number) => performance.timeOrigin + t;
  const nextStart = turns[i + 1]?.question.startedAt() ?? null;
  const reply = msgs.find((m) => {
    if (m.role !== 'assistant' || !m.content.startsWith(STORY_HEAD)) return false;
    const at = new Date(m.tm_create).getTime();
    return at > wall(qEnd) && (nextStart === null || at < wall(nextStart));
  });
  f.funnel.said++;
  // the i-th recognised question (the caller's aimessages in order)
  if (msgs.filter((m) => m.role === 'user' && m.content.includes('story')).length > i) f.funnel.recognised++;
  else {
    f.unrecognised.count++;
    if (t.question.maxGapMs() >= 100) f.unrecognised.packetPause++;
    const qStart = t.question.startedAt() ?? qEnd;
    if (stalls.some(([a, b]) => a < qEnd && b > qStart)) f.unrecognised.phoneStall++;
  }
  if (reply) f.funnel.replied++;
  if (typeof reply?.metadata.latency?.first_rtp_ms === 'number') f.funnel.sent++;
  if (first !== undefined) f.funnel.heard++;
  if (first !== undefined) {
    f.latency.push(first - qEnd);
    if (i > 0) f.laterLatency.push(first - qEnd);
    const l = reply?.metadata.latency;
    const parts = l ? [l.end_of_turn_wait_ms, l.llm_first_token_ms, l.tts_first_byte_ms] : [];
    if (parts.length && parts.every((x) => typeof x === 'number')) {
      const [wait, llm, tts] = parts as number[];
      const share = first - qEnd - wait! - llm! - tts!;
      f.phoneShare.push(share);
      if (process.env.BENCH_DEBUG) console.log('phone-share', i, Math.round(share), JSON.stringify(l));
      f.lessVendors.push(first - qEnd - llm! - tts!);
    }
  }
  const cut = reply?.metadata.latency?.interrupted === true;
  if (t.kind === 'echo') {
    f.echoTurns++;
    if (cut) f.selfInterruptions++;
  } else if (t.kind === 'backchannel') {
    f.backchannels++;
    if (cut) f.backchannelCuts++;
  } else {
    f.stops++;
    if (cut) f.stopCuts++;
    if (process.env.BENCH_DEBUG) console.log('stop-turn', t.word, cut, JSON.stringify(msgs.filter((m) => m.role === 'user').map((m) => m.content)));
    const wEnd = t.interjection?.endedAt() ?? null;
    if (wEnd !== null && cut) {
      const last = voiced.filter((v) => v > wEnd - 2000 && v < next).at(-1);
      if (last !== undefined) f.stopDelay.push(Math.max(0, last - wEnd));
    }
  }
}

async function main() {
  if (!['pocketsphinx', 'deepgram', 'cartesia', 'elevenlabs'].includes(STT)) throw new Error('--stt must be pocketsphinx, deepgram, cartesia or elevenlabs');
  if (TTS !== 'espeak-ng' && !VOICES[TTS]) throw new Error(`--tts must be espeak-ng or one of ${Object.keys(VOICES).join(', ')}`);
  // one <VENDOR>_BASE_URL serves the vendor's voice and recogniser: one stand-in cannot be both
  if ((STT === 'cartesia' || STT === 'elevenlabs') && TTS === STT) throw new Error(`--stt ${STT} with --tts ${TTS}: choose another voice (their stand-ins are separate servers)`);
  // the stand-ins in a process of their own: their bursts of recognition do not delay the phones' packets
  const standIns = await startStandInsProcess({
    stt: STT,
    sttLatencyMs: STT_LATENCY_MS,
    tts: TTS,
    ttsFirstByteMs: TTS_FIRST_BYTE_MS,
    llmFirstTokenMs: LLM_TTFT_MS,
    phrases: PHRASES,
    sttMaxDistance: STT_MAX_DISTANCE,
  });
  // RTP ports for twice the calls (a call takes an RTP/RTCP pair): the harness's 200 are exactly 100
  // pairs, and a port of the block that another socket holds (the phones' own, bound by the OS from
  // the same ephemeral range) left fewer than 100 calls' worth, refused with 488
  const rtp = portBlock('platformRtp', 4 * Math.max(CALLS, BASELINE, 50), 200);
  const env: Record<string, string> = {
    SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256',
    LOG_LEVEL: 'warn',
    EGRESS_ALLOW_CIDRS: '127.0.0.0/8',
    RTP_PORT_MIN: String(rtp.min),
    RTP_PORT_MAX: String(rtp.max),
    ...standIns.env,
  };
  // the platform in a process of its own: the phones and stand-ins here do not share its event loop
  const p = await startPlatformProcess(env);
  const rounds: Figures[] = [];
  try {
    if (BASELINE > 0) rounds.push(await round(p, standIns, BASELINE));
    rounds.push(await round(p, standIns, CALLS));
  } finally {
    killAllSipp();
    await p.close();
    await standIns.close();
  }
  const main = rounds.at(-1)!;
  const base = rounds.length > 1 ? rounds[0]! : null;
  const sttName =
    {
      deepgram: `Deepgram stand-in (phrase templates accepted within ${STT_MAX_DISTANCE}, interims as recognised, endpointing ${Math.max(100, MIN_DELAY_MS)} ms, ${STT_LATENCY_MS} ms latency)`,
      cartesia: `Cartesia stand-in (phrase templates, final after 300 ms of silence, ${STT_LATENCY_MS} ms latency)`,
      elevenlabs: `ElevenLabs stand-in (phrase templates, VAD commit after 0.5 s of silence, ${STT_LATENCY_MS} ms latency)`,
    }[STT] ?? 'pocketsphinx (phrase list)';
  const ttsName = TTS === 'espeak-ng' ? 'espeak-ng (local)' : `${TTS} stand-in, ${TTS_FIRST_BYTE_MS} ms to first byte`;
  const cmd = `source .data/env && npx tsx scripts/bench/ai/turn-taking.ts --calls ${CALLS} --turns ${TURNS} --echo-gain ${ECHO_GAIN}${AEC ? '' : ' --aec off'} --stt ${STT}${STT === 'pocketsphinx' ? '' : ` --stt-latency ${STT_LATENCY_MS}${STT_MAX_DISTANCE !== DEFAULT_MAX_DISTANCE ? ` --stt-max-distance ${STT_MAX_DISTANCE}` : ''}`} --tts ${TTS}${BASELINE ? ` --baseline ${BASELINE}` : ''}${MIN_DELAY_MS !== 400 ? ` --min-delay ${MIN_DELAY_MS}` : ''}`;
  const ratio = (a: number[], b: number[], q: number) => fmt((100 * pct(a, q)) / pct(b, q) - 100);
  const lines = [
    '## AI turn-taking on speakerphone calls',
    '',
    `Command: \`${cmd}\` (${new Date().toISOString()}, ${os.cpus().length} cores, shared machine)`,
    '',
    `Stand-ins: LLM ${LLM_TTFT_MS} ms to first token; voice ${ttsName}; STT ${sttName}; short wait ${MIN_DELAY_MS} ms; echo 150 ms at gain ${ECHO_GAIN}, echo canceller ${AEC && ECHO_GAIN > 0 ? 'on' : 'off'}.`,
    '',
    ...(base ? [`### ${base.calls} calls at once (baseline)`, '', ...figureLines(base, TURNS), '', `### ${main.calls} calls at once`, ''] : []),
    ...figureLines(main, TURNS),
    ...(base
      ? [
          '',
          `${main.calls} vs ${base.calls} calls: caller stops → agent audio p50 ${ratio(main.latency, base.latency, 50)} %, p95 ${ratio(main.latency, base.latency, 95)} %; less the stand-ins' stages p50 ${ratio(main.lessVendors, base.lessVendors, 50)} %, p95 ${ratio(main.lessVendors, base.lessVendors, 95)} %; platform's share p99 ${fmt(pct(main.own, 99))} vs ${fmt(pct(base.own, 99))} ms, from the phone p99 ${fmt(pct(main.phoneShare, 99))} vs ${fmt(pct(base.phoneShare, 99))} ms`,
        ]
      : []),
  ];
  const out = reportPath(`ai-turn-taking-${STT}-${TTS}-${CALLS}`);
  fs.writeFileSync(out, lines.join('\n'));
  console.log(lines.join('\n'));
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
  process.exit(0);
}

main().catch((e: Error) => {
  console.error(e);
  process.exit(1);
});
