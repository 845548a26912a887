/**
 * One simulated call of a scenario: a SipCaller dials the scenario's number through the edge with an
 * RtpPhone's SDP, and once answered the caller's turns play in order: wait_ms (silence on the line),
 * say (espeak-ng speech, made before the call so no turn waits for synthesis), dtmf (RFC 4733),
 * hangup (BYE). The platform hanging up ends the script where it is; a call still up when the script
 * is over is hung up by the caller; one longer than `maxCallMs`, or a run aborted, too. The caller's
 * side of the transcript is what it said, timed from the answer.
 */
import type { EvalRunScenario } from '../core/repos/eval-scenarios';
import type { EvalTranscriptLine } from '../core/evals/schema';
import type { EvalsConfig } from './config';
import { RtpPhone } from './rtp-phone';
import { SipCaller } from './sip-caller';
import { speak } from './speech';

export interface PlayedCall {
  sipCallId: string;
  endedBy: 'caller' | 'agent' | 'refused' | 'error';
  error?: string;
  /** when the 200 OK came (Date.now()), 0 when the call was not answered */
  answeredAt: number;
  callerLines: EvalTranscriptLine[];
}

type Deps = Pick<EvalsConfig, 'edge' | 'localHost' | 'answerTimeoutMs' | 'maxCallMs'>;

/** Resolves after `ms` or when `stop` settles, whichever is first; the timer is cleared either way. */
async function waitOr(ms: number, stop: Promise<unknown>): Promise<void> {
  let t: NodeJS.Timeout | undefined;
  await Promise.race([new Promise<void>((r) => (t = setTimeout(r, ms))), stop]);
  clearTimeout(t);
}

/** `callId`: the SIP Call-ID to send (a call the run pinned to an AI version under it); a fresh one when absent. */
export async function playCall(scenario: EvalRunScenario, deps: Deps, signal: AbortSignal, callId?: string): Promise<PlayedCall> {
  const speech = new Map<number, Int16Array>();
  for (const [i, turn] of scenario.caller.turns.entries()) if ('say' in turn) speech.set(i, await speak(turn.say, scenario.caller.language));
  const phone = await RtpPhone.open(deps.localHost);
  let caller: SipCaller;
  try {
    caller = await SipCaller.open({ edge: deps.edge, localHost: deps.localHost, answerTimeoutMs: deps.answerTimeoutMs, ...(callId ? { callId } : {}) });
  } catch (e) {
    phone.close();
    throw e;
  }
  const played: PlayedCall = { sipCallId: caller.callId, endedBy: 'caller', answeredAt: 0, callerLines: [] };
  let cap: NodeJS.Timeout | undefined;
  // the run-wide signal outlives this call: its listener goes with the call (finally), as the cap does
  let onAbort: (() => void) | undefined;
  try {
    const dialled = await caller.dial(scenario.target.target, phone.sdp());
    if (!dialled.answered) return { ...played, endedBy: 'refused', error: dialled.reason };
    played.answeredAt = Date.now();
    const t0 = performance.now();
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
    for (const [i, turn] of scenario.caller.turns.entries()) {
      if (over) break;
      if ('wait_ms' in turn) await waitOr(turn.wait_ms, stop);
      else if ('say' in turn) {
        const said = phone.say(speech.get(i)!);
        await Promise.race([said, stop]);
        const at = await Promise.race([said, Promise.resolve(null)]);
        if (at !== null) played.callerLines.push({ role: 'caller', text: turn.say, t_ms: Math.round(at - t0) });
      } else if ('dtmf' in turn) await Promise.race([phone.dtmf(turn.dtmf), stop]);
      else break;
    }
    if ((await Promise.race([caller.ended, Promise.resolve(null)])) === 'agent') played.endedBy = 'agent';
    else await caller.hangup();
    return played;
  } finally {
    clearTimeout(cap);
    if (onAbort) signal.removeEventListener('abort', onAbort);
    phone.close();
    caller.close();
  }
}
