/**
 * One simulated call of a scenario: a SipCaller dials the scenario's number through the edge with an
 * RtpPhone's SDP, and once answered the caller's turns play in order: wait_ms (silence on the line),
 * say (espeak-ng speech, made before the call so no turn waits for synthesis; with after_agent_ms it
 * talks over the agent: it starts that long after the agent's utterance heard now, or the next one,
 * started), dtmf (RFC 4733), hangup (BYE). The platform hanging up ends the script where it is; a
 * call still up when the script is over is hung up by the caller; one longer than `maxCallMs`, or a
 * run aborted, too. A caller with a goal instead plays goal-caller.ts (its LLM failing ends the call
 * with `error`). The caller's background (background.ts) is mixed into all it sends; a caller that
 * hears (hearing.ts) transcribes the rest of what it heard once the call is over. The caller's side of
 * the transcript is what it said, timed from the answer; what it heard of the agent is kept for the
 * audio checks (checks/audio.ts), and both tracks of the call as audio (call-audio.ts).
 */
import type { EvalRunScenario } from '../core/repos/eval-scenarios';
import type { EvalCaller, EvalHeardSegment, EvalTranscriptLine, EvalTurn } from '../core/evals/schema';
import type { ChatLlm } from '../core/llm/client';
import type { EvalsConfig } from './config';
import { RtpPhone } from './rtp-phone';
import { SipCaller } from './sip-caller';
import { speak } from './speech';
import { utteranceAt, VOICED_LEVEL, type HeardPacket } from './checks/heard';
import { attachBackground, prepareBackground } from './background';
import { GoalCallerError, playGoal, type GoalOutcome } from './goal-caller';
import { Hearing } from './hearing';
import { CallAudio, type KeptAudio } from './call-audio';

/** A say turn that talked over the agent: when it started and ended (ms after the answer), and since when the agent was talking. */
export interface TalkOver {
  t_ms: number;
  end_ms: number;
  after_agent_ms: number;
  agent_from_ms: number;
}

export interface PlayedCall {
  sipCallId: string;
  endedBy: 'caller' | 'agent' | 'refused' | 'error';
  error?: string;
  /** when the 200 OK came (Date.now()), 0 when the call was not answered */
  answeredAt: number;
  callerLines: EvalTranscriptLine[];
  /** each say's audio, from its first to its last packet (ms after the answer) */
  callerSpeech: { t_ms: number; end_ms: number }[];
  /** each dtmf turn, from its first digit's first packet to its last digit's end packets (ms after the answer) */
  callerDigits?: { t_ms: number; end_ms: number }[];
  talkOvers: TalkOver[];
  /** talk-over turns not said: the agent was not heard within `agentWaitMs` */
  talkOversSkipped: number;
  /** the platform's audio as the caller heard it */
  heard: HeardPacket[];
  /** when the call ended, ms after the answer */
  end_ms: number;
  /** what the caller's recogniser made of the agent's audio (caller.hear, a goal caller) */
  heardSegments?: EvalHeardSegment[];
  /** a goal caller: how it ended */
  goal?: GoalOutcome;
  /** both tracks of an answered call (call-audio.ts), at most `audioMaxS` of each */
  audio?: KeptAudio;
}

type Deps = Pick<EvalsConfig, 'edge' | 'localHost' | 'answerTimeoutMs' | 'maxCallMs' | 'agentWaitMs' | 'judgeTimeoutMs' | 'goalReplySilenceMs' | 'audioMaxS'> & {
  /** the goal caller's LLM for the call of this SIP Call-ID (asked once, when its first line is due) */
  goalLlm?: (sipCallId: string) => Promise<ChatLlm | { error: string }>;
};

/** Resolves after `ms` or when `stop` settles, whichever is first; the timer is cleared either way. */
async function waitOr(ms: number, stop: Promise<unknown>): Promise<void> {
  let t: NodeJS.Timeout | undefined;
  await Promise.race([new Promise<void>((r) => (t = setTimeout(r, ms))), stop]);
  clearTimeout(t);
}

/**
 * When a talk-over may start: `afterMs` after the start of the agent's utterance heard now, or of
 * the next one heard within `waitMs` (woken by each packet, never polled). Null: the agent was not
 * heard in time, or the call is over. `now` is ms after the answer.
 */
async function agentUtterance(phone: RtpPhone, now: () => number, t0: number, waitMs: number, stop: Promise<unknown>): Promise<number | null> {
  const current = utteranceAt(
    phone.heard.map((h) => ({ t_ms: h.at - t0, level: h.level })),
    now(),
  );
  if (current !== null) return current;
  let off: () => void = () => undefined;
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      new Promise<number>((r) => {
        off = phone.onHeard(() => {
          const last = phone.heard.at(-1);
          if (last && last.level > VOICED_LEVEL) r(last.at - t0);
        });
      }),
      new Promise<null>((r) => (t = setTimeout(() => r(null), waitMs))),
      stop.then(() => null),
    ]);
  } finally {
    off();
    clearTimeout(t);
  }
}

/** What the turns of a call play on: the phone, the clock from the answer, and what ends the call. */
interface Line {
  phone: RtpPhone;
  t0: number;
  now: () => number;
  stop: Promise<unknown>;
  over: () => boolean;
}

/** The scripted turns, in order, until they or the call are over. */
async function playTurns(turns: EvalTurn[], speech: Map<number, Int16Array>, l: Line, played: PlayedCall, agentWaitMs: number): Promise<void> {
  const { phone, t0, now, stop } = l;
  for (const [i, turn] of turns.entries()) {
    if (l.over()) break;
    if ('wait_ms' in turn) await waitOr(turn.wait_ms, stop);
    else if ('say' in turn) {
      let agentFrom: number | null = null;
      if (turn.after_agent_ms !== undefined) {
        agentFrom = await agentUtterance(phone, now, t0, agentWaitMs, stop);
        if (agentFrom === null) {
          if (!l.over()) played.talkOversSkipped++;
          continue;
        }
        await waitOr(agentFrom + turn.after_agent_ms - now(), stop);
        if (l.over()) break;
      }
      const said = phone.say(speech.get(i)!);
      await Promise.race([said, stop]);
      const at = await Promise.race([said, Promise.resolve(null)]);
      if (at === null) continue;
      const line = { t_ms: Math.round(at - t0), end_ms: Math.round(now()) };
      played.callerLines.push({ role: 'caller', text: turn.say, t_ms: line.t_ms });
      played.callerSpeech.push(line);
      if (agentFrom !== null) played.talkOvers.push({ ...line, after_agent_ms: turn.after_agent_ms!, agent_from_ms: Math.round(agentFrom) });
    } else if ('dtmf' in turn) {
      const from = now();
      const end = await Promise.race([phone.dtmf(turn.dtmf), stop.then(() => null)]);
      if (end !== null) (played.callerDigits ??= []).push({ t_ms: Math.round(from), end_ms: Math.round(end - t0) });
    } else break;
  }
}

/** The goal caller's play (goal-caller.ts); its LLM failing ends the call with `played.error`. */
async function playGoalCall(scenario: EvalRunScenario, l: Line, hearing: Hearing, played: PlayedCall, deps: Deps, signal: AbortSignal): Promise<void> {
  try {
    played.goal = await playGoal({
      caller: scenario.caller,
      phone: l.phone,
      hearing,
      t0: l.t0,
      now: l.now,
      stop: l.stop,
      signal,
      llm: deps.goalLlm ? () => deps.goalLlm!(played.sipCallId) : () => Promise.resolve({ error: 'this worker was given no way to reach an LLM vendor' }),
      timeoutMs: deps.judgeTimeoutMs,
      agentWaitMs: deps.agentWaitMs,
      replySilenceMs: deps.goalReplySilenceMs,
      said: (line, end_ms) => {
        played.callerLines.push(line);
        played.callerSpeech.push({ t_ms: line.t_ms, end_ms });
      },
    });
  } catch (e) {
    if (!(e instanceof GoalCallerError)) throw e;
    played.error = e.message;
    played.goal = { reached: false, turns: played.callerLines.length, reason: e.message };
  }
}

/** The caller's ear: the scenario's `hear`, or pocketsphinx for a goal caller that names none; null: the caller does not transcribe. */
export function hearingOf(caller: EvalCaller): Hearing | null {
  const hear = caller.hear ?? (caller.goal !== undefined ? { provider: 'pocketsphinx' as const } : null);
  return hear ? new Hearing(hear, caller.language) : null;
}

/** The scripted caller's lines, by turn index, in its language and voice. */
export async function scriptSpeech(caller: EvalCaller): Promise<Map<number, Int16Array>> {
  const speech = new Map<number, Int16Array>();
  const voice = caller.voice ? { variant: caller.voice } : {};
  for (const [i, turn] of (caller.turns ?? []).entries()) if ('say' in turn) speech.set(i, await speak(turn.say, caller.language, voice));
  return speech;
}

/** `callId`: the SIP Call-ID to send (a call the run pinned to an AI version under it); a fresh one when absent. */
export async function playCall(scenario: EvalRunScenario, deps: Deps, signal: AbortSignal, callId?: string): Promise<PlayedCall> {
  const speech = await scriptSpeech(scenario.caller);
  const background = scenario.caller.background ? await prepareBackground(scenario.caller.background, scenario.caller.language) : null;
  const hearing = hearingOf(scenario.caller);
  const audio = new CallAudio(deps.audioMaxS * 1000);
  const phone = await RtpPhone.open(deps.localHost);
  let caller: SipCaller;
  try {
    caller = await SipCaller.open({ edge: deps.edge, localHost: deps.localHost, answerTimeoutMs: deps.answerTimeoutMs, ...(callId ? { callId } : {}) });
  } catch (e) {
    phone.close();
    throw e;
  }
  const played: PlayedCall = { sipCallId: caller.callId, endedBy: 'caller', answeredAt: 0, callerLines: [], callerSpeech: [], talkOvers: [], talkOversSkipped: 0, heard: [], end_ms: 0 };
  let t0 = 0;
  let cap: NodeJS.Timeout | undefined;
  // the run-wide signal outlives this call: its listener goes with the call (finally), as the cap does
  let onAbort: (() => void) | undefined;
  const detach: (() => void)[] = [];
  try {
    const dialled = await caller.dial(scenario.target.target, phone.sdp());
    if (!dialled.answered) return { ...played, endedBy: 'refused', error: dialled.reason };
    played.answeredAt = Date.now();
    t0 = performance.now();
    const now = () => performance.now() - t0;
    if (hearing) detach.push(hearing.attach(phone, t0));
    detach.push(audio.attach(phone, t0));
    if (background) detach.push(attachBackground(phone, background));
    phone.start(dialled.remote);
    const aborted = new Promise<void>((r) => {
      if (signal.aborted) return r();
      onAbort = () => r();
      signal.addEventListener('abort', onAbort, { once: true });
    });
    const capped = new Promise<void>((r) => (cap = setTimeout(r, deps.maxCallMs)));
    const agentBye = caller.ended.then((by) => (by === 'agent' ? true : new Promise<never>(() => undefined)));
    const stop = Promise.race([aborted, capped, agentBye]);
    let over = false;
    void stop.then(() => (over = true));
    const line: Line = { phone, t0, now, stop, over: () => over };
    if (scenario.caller.goal !== undefined && hearing) await playGoalCall(scenario, line, hearing, played, deps, signal);
    else await playTurns(scenario.caller.turns ?? [], speech, line, played, deps.agentWaitMs);
    if ((await Promise.race([caller.ended, Promise.resolve(null)])) === 'agent') played.endedBy = 'agent';
    else await caller.hangup();
  } finally {
    clearTimeout(cap);
    if (onAbort) signal.removeEventListener('abort', onAbort);
    detach.forEach((d) => d());
    if (t0) {
      played.end_ms = Math.round(performance.now() - t0);
      played.heard = phone.heard.map((h) => ({ t_ms: Math.round((h.at - t0) * 10) / 10, level: Math.round(h.level) }));
      played.audio = audio.finish(played.end_ms);
    }
    phone.close();
    caller.close();
  }
  if (hearing) await hear(hearing, played, signal);
  return played;
}

/** After the call: the rest of what the caller heard transcribed; a recogniser that fails fails the call, saying so. */
async function hear(hearing: Hearing, played: PlayedCall, signal: AbortSignal): Promise<void> {
  try {
    played.heardSegments = await hearing.finish(signal);
  } catch (e) {
    played.error ??= (e as Error).message;
    played.heardSegments = hearing.segments;
  }
}
