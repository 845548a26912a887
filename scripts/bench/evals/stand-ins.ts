/**
 * A vendor of the evals benchmark's agent (run.ts), in a process of its own as a vendor is on hosts of
 * its own: the OpenAI-compatible LLM stand-in (testkit/llm-server.ts), Deepgram's live transcription
 * stand-in hearing the scenario's phrases (testkit/speech/deepgram-server.ts with the phrase recogniser)
 * or Deepgram Aura's speak stand-in (testkit/vendors/deepgram.ts); run.ts starts one process for each.
 * Their work (the recogniser's feature extraction and matching above all) would otherwise run on the
 * event loop of the platform under measurement and be counted in its latency stages; and one process
 * for all three was a queue no real vendor shares: at 50 calls the answers' LLM requests and voices
 * waited behind the finals' recognition, and the reverse.
 *
 * Prints one JSON line (the URLs of the part it serves, and the key) once listening; ends when its stdin
 * closes (its parent gone). A line `loop` on its stdin is answered with one line: its own event-loop delay
 * since the last such line (p50, p99, max ms), so a run can tell whether a vendor's loop held the agent.
 *   npx tsx scripts/bench/evals/stand-ins.ts llm|stt|tts '<json: StandInSettings>'
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { lastUser, startLlmServer } from '../../../testkit/llm-server';
import { FakeDeepgram } from '../../../testkit/speech/deepgram-server';
import { PhraseRecogniser } from '../../../testkit/speech/phrase-recogniser';
import { startDeepgramSpeak } from '../../../testkit/vendors/deepgram';
import { STAND_IN_PARTS, type StandInPart } from './stand-in-parts';

export interface StandInUrls {
  llm: string;
  /** Deepgram's live transcription endpoint (DEEPGRAM_URL) */
  stt: string;
  /** Deepgram's base URL for Aura (DEEPGRAM_BASE_URL) */
  tts: string;
  key: string;
}

export interface StandInSettings {
  /** the agent's opening line ('' : it says nothing until asked) */
  greeting: string;
  answer: string;
  phrases: string[];
  sttLatencyMs: number;
}

const KEY = 'bench-evals-key';

/** The part's server, listening: its URL and how to close it. */
async function serve(part: StandInPart, s: StandInSettings): Promise<{ url: string; close(): Promise<void> }> {
  if (part === 'llm') {
    // the agent speaks first (ai_talk asks the LLM with no user line yet): its greeting, then the answer
    const llm = await startLlmServer({ respond: (req) => ({ text: lastUser(req) ? s.answer : s.greeting }) });
    return { url: llm.url, close: () => llm.close() };
  }
  if (part === 'stt') {
    const dg = await new FakeDeepgram(KEY, { recogniser: new PhraseRecogniser(s.phrases), latencyMs: s.sttLatencyMs }).listen();
    return { url: dg.url, close: () => dg.close() };
  }
  const speak = await startDeepgramSpeak({ apiKey: KEY });
  return { url: speak.url, close: () => speak.close() };
}

async function main(): Promise<void> {
  const part = process.argv[2] as StandInPart;
  if (!STAND_IN_PARTS.includes(part)) throw new Error(`stand-ins.ts: the part is one of ${STAND_IN_PARTS.join(', ')}, got ${String(part)}`);
  const s = JSON.parse(process.argv[3] ?? '{}') as StandInSettings;
  const server = await serve(part, s);
  process.stdout.write(JSON.stringify({ [part]: server.url, key: KEY }) + '\n');
  const end = () =>
    void server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let input = '';
  process.stdin.on('data', (d: Buffer) => {
    input += d.toString();
    for (let nl = input.indexOf('\n'); nl >= 0; nl = input.indexOf('\n')) {
      if (input.slice(0, nl).trim() === 'loop') {
        const ms = (ns: number) => Math.round(ns / 1e6);
        process.stdout.write(JSON.stringify({ p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) }) + '\n');
        delay.reset();
      }
      input = input.slice(nl + 1);
    }
  });
  process.stdin.on('end', end);
  process.stdin.on('error', end);
  process.stdin.resume();
  process.once('SIGTERM', end);
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
