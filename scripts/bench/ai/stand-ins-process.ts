/**
 * The vendor stand-ins of the turn-taking benchmark (scripts/bench/ai/turn-taking.ts) in a process of
 * their own: the LLM (150 ms to its first token, a story per "tell me a story"), the recogniser
 * (Deepgram's, Cartesia's or ElevenLabs' stand-in, naming the bench's phrases by dynamic time warping,
 * testkit/speech/) and the cloud voice. The recognisers' work comes in bursts (every call's question
 * within a few seconds): in the bench's own process it delayed the phones' packets by hundreds of ms
 * at 100 calls, and the gaps split the callers' words into pieces no recogniser knows. Started by
 * `startStandInsProcess`: the settings in BENCH_STAND_INS (JSON); it prints `{"llmUrl": …, "env": {…}}`
 * (the platform's <VENDOR>_BASE_URL / _API_KEY) once listening and closes on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';
import { startLlmServer, lastUser, type LlmRequest } from '../../../testkit/llm-server';
import { FakeDeepgram } from '../../../testkit/speech/deepgram-server';
import { PhraseRecogniser } from '../../../testkit/speech/phrase-recogniser';
import { FakeCartesiaStt } from '../../../testkit/speech/cartesia-stt-server';
import { FakeElevenLabsStt } from '../../../testkit/speech/elevenlabs-stt-server';
import type { StandIn, StandInOptions } from '../../../testkit/vendors/marker';
import { startElevenLabs } from '../../../testkit/vendors/elevenlabs';
import { startCartesia } from '../../../testkit/vendors/cartesia';
import { startDeepgramSpeak } from '../../../testkit/vendors/deepgram';
import { startOpenAiSpeech } from '../../../testkit/vendors/openai';

export interface StandInsSettings {
  stt: string;
  sttLatencyMs: number;
  tts: string;
  ttsFirstByteMs: number;
  llmFirstTokenMs: number;
  /** what the recogniser knows */
  phrases: string[];
  /** the phrase recogniser's acceptance distance (PhraseRecogniser.maxDistance, default 14) */
  sttMaxDistance?: number;
}

export interface StandInsProcess {
  llmUrl: string;
  /** the platform's settings that point it at the stand-ins */
  env: Record<string, string>;
  /** CPU seconds the process has used so far */
  cpuSeconds(): number;
  close(): Promise<void>;
}

const DG_KEY = 'dg-test-key';
/** cloud voices: the stand-in, the platform's <PREFIX>_BASE_URL / _API_KEY, the key, the URL's suffix */
export const VOICES: Record<string, [(o: StandInOptions) => Promise<StandIn>, string, string, string]> = {
  elevenlabs: [startElevenLabs, 'ELEVENLABS', 'el-test-key', ''],
  cartesia: [startCartesia, 'CARTESIA', 'ca-test-key', ''],
  deepgram: [(o) => startDeepgramSpeak({ ...o, apiKey: DG_KEY }), 'DEEPGRAM', DG_KEY, ''],
  openai: [startOpenAiSpeech, 'OPENAI', 'sk-openai-test', '/v1'],
};

/** The reply to the n-th "tell me a story" of a conversation (unique, so each turn's reply is known). */
export const story = (n: number) => `Here is part ${n} of the story. This is the first sentence of it. This is the second sentence of it. And this is the last sentence of part ${n}.`;

function respond(req: LlmRequest) {
  if (req.messages.at(-1)?.role === 'tool') return { text: '' };
  const user = lastUser(req);
  if (!user) return { text: '' };
  const n = req.messages.filter((m) => m.role === 'user' && typeof m.content === 'string' && m.content.includes('story')).length;
  return user.includes('story') ? { text: story(n) } : { text: '' };
}

/** CPU seconds of process `pid` (all its threads), from /proc. */
export function processCpuSeconds(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // the fields after the process name (which may hold spaces): utime and stime are the 12th and 13th of them
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / 100;
}

/** Starts this file as a child process with the stand-ins of `s`. */
export async function startStandInsProcess(s: StandInsSettings): Promise<StandInsProcess> {
  // BENCH_STAND_INS_NODE_ARGS: node flags for the stand-ins' process only (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`)
  const envArgs = (process.env.BENCH_STAND_INS_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...envArgs, ...process.execArgv, __filename], {
    env: { ...process.env, BENCH_STAND_INS: JSON.stringify(s) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const started = await new Promise<{ llmUrl: string; env: Record<string, string> }>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.on('line', (l) => {
      if (l.startsWith('{"llmUrl"')) resolve(JSON.parse(l) as { llmUrl: string; env: Record<string, string> });
      // the stand-ins' diagnosis (BENCH_DEBUG) goes to the bench's output
      else console.log(l);
    });
    child.once('exit', (code) => reject(new Error(`the stand-ins process exited (${String(code)}) before it listened`)));
  });
  return {
    ...started,
    cpuSeconds: () => processCpuSeconds(child.pid!),
    async close() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function main(): Promise<void> {
  const s = JSON.parse(process.env.BENCH_STAND_INS ?? '{}') as StandInsSettings;
  const llm = await startLlmServer({ respond, firstChunkDelayMs: s.llmFirstTokenMs });
  const env: Record<string, string> = {};
  const closers: (() => Promise<void>)[] = [() => llm.close()];
  if (s.stt === 'deepgram') {
    const dg = await new FakeDeepgram(DG_KEY, {
      recogniser: new PhraseRecogniser(s.phrases, s.sttMaxDistance),
      latencyMs: s.sttLatencyMs,
      onFinal: process.env.BENCH_DEBUG ? (text, d, ms) => console.log('stt-final', JSON.stringify([text, Math.round(d * 10) / 10, ms])) : undefined,
    }).listen();
    env.DEEPGRAM_API_KEY = DG_KEY;
    env.DEEPGRAM_URL = dg.url;
    closers.push(() => dg.close());
  }
  if (s.stt === 'cartesia' || s.stt === 'elevenlabs') {
    const key = `${s.stt}-stt-key`;
    const st = await (s.stt === 'cartesia' ? new FakeCartesiaStt(key) : new FakeElevenLabsStt(key)).listen();
    st.phrases = new PhraseRecogniser(s.phrases, s.sttMaxDistance);
    st.latencyMs = s.sttLatencyMs;
    env[`${s.stt.toUpperCase()}_BASE_URL`] = st.baseUrl;
    env[`${s.stt.toUpperCase()}_API_KEY`] = key;
    closers.push(() => st.close());
  }
  if (s.tts !== 'espeak-ng') {
    const [start, prefix, key, suffix] = VOICES[s.tts]!;
    const voice = await start({ firstByteMs: s.ttsFirstByteMs });
    env[`${prefix}_BASE_URL`] = voice.url + suffix;
    env[`${prefix}_API_KEY`] = key;
    closers.push(() => voice.close());
  }
  process.stdout.write(`${JSON.stringify({ llmUrl: llm.url, env })}\n`);
  process.once('SIGTERM', () => {
    void Promise.allSettled(closers.map((c) => c())).finally(() => process.exit(0));
  });
}

if (require.main === module)
  main().catch((e: Error) => {
    console.error(e);
    process.exit(1);
  });
