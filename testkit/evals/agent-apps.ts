/**
 * Voice agents a customer runs outside the platform, as eval targets (docs/evals.md "Agent kinds"):
 * each a real WebSocket server on loopback, written from Twilio's docs, answering from a scripted
 * brain. `relayAgent`: a ConversationRelay app (setup, prompt, interrupt, dtmf in; text tokens out).
 * `streamsAgent`: a Media Streams app running a small agent loop of its own: it hears the caller's
 * audio (an energy detector on the inbound µ-law), takes a turn when the caller has been silent for
 * `endOfTurnMs`, says its line with espeak-ng (sent as media chunks, then a mark), stops itself with
 * `clear` when the caller talks over it, and answers a digit.
 */
import { mulawBase64ToPcm, samplesToMulawBase64 } from '../../core/streams/twilio';
import { speak } from '../../evals/speech';
import { RelayApp, type RelaySession } from '../twiml/relay-app';
import { twilioApp, type TwilioApp, type TwilioConn } from '../streams/twilio';

/** What the agent says: its greeting, its answer to what the caller said (a prompt, or '' when it could not tell), to a digit. */
export interface Brain {
  greeting: string;
  answer(prompt: string): string;
  digit(d: string): string;
}

/**
 * A ConversationRelay app: the answer streamed as two text tokens, a digit answered alike, each
 * `replyDelayMs` after the prompt or digit came (its "LLM" thinking; the timer goes with the session);
 * every session kept.
 */
export async function relayAgent(authToken: string, brain: Brain, replyDelayMs = 0): Promise<RelayApp> {
  const app = await RelayApp.start(authToken);
  const send = (s: RelaySession, text: string) => {
    const words = text.split(' ');
    const half = Math.ceil(words.length / 2);
    s.send({ type: 'text', token: `${words.slice(0, half).join(' ')} `, last: false });
    s.send({ type: 'text', token: words.slice(half).join(' '), last: true });
  };
  const reply = (s: RelaySession, text: string) => {
    if (!replyDelayMs) return send(s, text);
    const t = setTimeout(() => send(s, text), replyDelayMs);
    s.ws.once('close', () => clearTimeout(t));
  };
  app.onMessage = (s, m) => {
    if (m.type === 'prompt' && m.last !== false) reply(s, brain.answer(String(m.voicePrompt ?? '')));
    if (m.type === 'dtmf') reply(s, brain.digit(String(m.digit ?? '')));
  };
  return app;
}

/** Mean |sample| above which a 20 ms chunk of the caller is speech. */
const VOICED = 400;

export interface StreamsAgent {
  app: TwilioApp;
  /** what the agent did, in order (`say <text>`, `say failed <text>: <why>`, `clear`), for a test's messages */
  log: string[];
  close(): Promise<void>;
}

/** A Media Streams app with its own turn-taking: `endOfTurnMs` of caller silence after speech is the caller's turn ending. */
export async function streamsAgent(brain: Brain, endOfTurnMs = 700): Promise<StreamsAgent> {
  const app = await twilioApp('/agent');
  const log: string[] = [];
  const lines = new Map<string, Promise<Int16Array>>();
  const voice = (text: string) => {
    let v = lines.get(text);
    // its own lines (an app of the customer's, not the evals caller): never the caller's process-wide memo
    if (!v) lines.set(text, (v = speak(text, 'en-US', { memo: false })));
    return v;
  };
  void voice(brain.greeting).catch(() => undefined);
  app.onConnection = (c) => loop(c, brain, voice, log, endOfTurnMs);
  return { app, log, close: () => app.close() };
}

function loop(c: TwilioConn, brain: Brain, voice: (t: string) => Promise<Int16Array>, log: string[], endOfTurnMs: number): void {
  let speaking = 0; // marks sent and not yet played back
  let voicedRun = 0;
  let callerTalked = false;
  let turnTimer: NodeJS.Timeout | undefined;
  let marks = 0;
  const sayNow = async (text: string) => {
    const pcm = await voice(text);
    if (c.ws.readyState !== c.ws.OPEN) return;
    log.push(`say ${text}`);
    for (let i = 0; i < pcm.length; i += 160) c.send({ event: 'media', media: { payload: samplesToMulawBase64(pcm.subarray(i, i + 160)) } });
    speaking++;
    c.send({ event: 'mark', mark: { name: `line-${++marks}` } });
  };
  // a line that cannot be voiced (espeak-ng failing) goes into the log, never an unhandled rejection
  const say = (text: string) => void sayNow(text).catch((e: unknown) => log.push(`say failed ${text}: ${(e as Error).message}`));
  const endTurn = () => {
    turnTimer = undefined;
    callerTalked = false;
    say(brain.answer(''));
  };
  c.ws.on('error', () => undefined);
  c.ws.on('close', () => clearTimeout(turnTimer));
  c.ws.on('message', (data: Buffer) => {
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(data.toString()) as Record<string, unknown>;
    } catch {
      return;
    }
    if (m.event === 'start') say(brain.greeting);
    if (m.event === 'mark') speaking = Math.max(0, speaking - 1);
    if (m.event === 'dtmf') say(brain.digit(String((m.dtmf as { digit?: string } | undefined)?.digit ?? '')));
    if (m.event !== 'media') return;
    // a media message without media (or not an object) is silence, never a throw in the socket's listener
    const pcm = mulawBase64ToPcm(String((m.media as { payload?: unknown } | null | undefined)?.payload ?? ''));
    let sum = 0;
    for (let i = 0; i + 1 < pcm.length; i += 2) sum += Math.abs(pcm.readInt16LE(i));
    const voiced = pcm.length > 0 && sum / (pcm.length / 2) > VOICED;
    voicedRun = voiced ? voicedRun + 1 : 0;
    if (voiced) {
      callerTalked = true;
      clearTimeout(turnTimer);
      turnTimer = undefined;
      // 60 ms of the caller's speech over the agent's: the agent stops (barge-in)
      if (voicedRun === 3 && speaking > 0) {
        speaking = 0;
        log.push('clear');
        c.send({ event: 'clear' });
      }
    } else if (callerTalked && !turnTimer) {
      turnTimer = setTimeout(endTurn, endOfTurnMs);
    }
  });
}
