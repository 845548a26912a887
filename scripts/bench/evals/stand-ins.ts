/**
 * The vendors of the evals benchmark's agent (run.ts), in a process of their own as a vendor is on a
 * host of its own: the OpenAI-compatible LLM stand-in (testkit/llm-server.ts), Deepgram's live
 * transcription stand-in hearing the scenario's phrases (testkit/speech/deepgram-server.ts with the
 * phrase recogniser) and Deepgram Aura's speak stand-in (testkit/vendors/deepgram.ts). Their work (the
 * recogniser's feature extraction and matching above all) would otherwise run on the event loop of
 * the platform under measurement and be counted in its latency stages.
 *
 * Prints one JSON line `{llm, stt, tts, key}` once listening; ends when its stdin closes (its parent gone).
 * A line `loop` on its stdin is answered with one line: its own event-loop delay since the last such line
 * (p50, p99, max ms), so a run can tell whether the stand-ins' loop held the agent's answers.
 *   npx tsx scripts/bench/evals/stand-ins.ts '<json: {answer, phrases, sttLatencyMs}>'
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { lastUser, startLlmServer } from '../../../testkit/llm-server';
import { FakeDeepgram } from '../../../testkit/speech/deepgram-server';
import { PhraseRecogniser } from '../../../testkit/speech/phrase-recogniser';
import { startDeepgramSpeak } from '../../../testkit/vendors/deepgram';

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

async function main(): Promise<void> {
  const s = JSON.parse(process.argv[2] ?? '{}') as StandInSettings;
  // the agent speaks first (ai_talk asks the LLM with no user line yet): its greeting, then the answer
  const llm = await startLlmServer({ respond: (req) => ({ text: lastUser(req) ? s.answer : s.greeting }) });
  const dg = await new FakeDeepgram(KEY, { recogniser: new PhraseRecogniser(s.phrases), latencyMs: s.sttLatencyMs }).listen();
  const speak = await startDeepgramSpeak({ apiKey: KEY });
  const urls: StandInUrls = { llm: llm.url, stt: dg.url, tts: speak.url, key: KEY };
  process.stdout.write(JSON.stringify(urls) + '\n');
  const end = () => void Promise.allSettled([llm.close(), dg.close(), speak.close()]).then(() => process.exit(0));
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
