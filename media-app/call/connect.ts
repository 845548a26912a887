/**
 * The connect action (and extension-to-extension calls): every destination is dialled at once as a
 * chained leg of the master (its child in the call tree), the first that answers is bridged to the
 * master (a Bridge, bridge.ts, whose rule returns the master to its flow when the destination leaves),
 * the rest are hung up, and the result comes when the bridge ends. A transfer may put another call in
 * either side's place (Bridge.replace): the bridge keeps the slots, so the result still says which
 * side ended it.
 */
import type { ConnectResult } from '../flow/call-port';
import { abortError } from '../kit/clock';
import { Bridge, BridgeError } from './bridge';
import { CallSession } from './session';
import { offerPickup } from './pickable';

export interface ConnectLegs {
  /** Dials one prepared leg; true when it answered. */
  dial(leg: CallSession): Promise<boolean>;
}

/**
 * The one outcome of the ringing when it has a no-answer time (an extension's voicemail_timeout): an
 * answer or the timer, whichever comes first, decides once; the other is refused. A leg is answered
 * from the moment its session attaches the dialog (CallSession.attachDialog, synchronous); the timer
 * closes the legs (synchronous too: a 200 OK landing after that is refused with a BYE). So it is never
 * both: a callee bridged and the caller sent to the box, nor a caller answered and dropped.
 *
 *   ringing ──answer──► answered      (the timer does nothing)
 *      └────timer────► rang_out       (the legs are cancelled; a late answer gets ACK + BYE)
 */
class RingOutcome {
  private decided: 'answered' | 'rang_out' | null = null;

  /** Moves to `to` when nothing was decided yet; false when the other outcome came first. */
  decide(to: 'answered' | 'rang_out'): boolean {
    if (this.decided) return this.decided === to;
    this.decided = to;
    return true;
  }

  get rangOut(): boolean {
    return this.decided === 'rang_out';
  }
}

/** Resolves with the first leg to answer (or the call that picked the ringing legs up), or null (none did, or the master ended first). */
function firstAnswer(master: CallSession, legs: CallSession[], dialer: ConnectLegs, picked: Promise<CallSession>): Promise<CallSession | null> {
  return new Promise<CallSession | null>((resolve) => {
    void picked.then(resolve);
    let left = legs.length;
    if (!left) resolve(null);
    for (const leg of legs) {
      dialer.dial(leg).then(
        (answered) => {
          if (answered) resolve(leg);
          else if (--left === 0) resolve(null);
        },
        (err: Error) => {
          leg.closeInBackground({ cause: 'failure', by: 'local', why: `dial failed: ${err.message}`, announce: true });
          if (--left === 0) resolve(null);
        },
      );
    }
    master.done.then(
      () => resolve(null),
      () => resolve(null),
    );
  });
}

/**
 * durationLimitMs: the bridge's longest life after the answer; then the destination side is hung up
 * (ended_by destination) and the master's flow goes on (Twilio's Dial timeLimit). record: the master
 * is recorded (both directions mixed) from the answer until the bridge ends (Twilio's Dial record).
 * hangupOnStar: a * from the master hangs up the destination side (Twilio's Dial hangupOnStar).
 * noAnswerMs: how long the legs ring before they are cancelled and the result is not answered with
 * hangup_reason `noanswer` (decided once against an answer: RingOutcome).
 */
export async function bridgeFirstAnswer(
  master: CallSession,
  legs: CallSession[],
  dialer: ConnectLegs,
  signal: AbortSignal,
  opts: { durationLimitMs?: number; record?: boolean; hangupOnStar?: boolean; noAnswerMs?: number } = {},
): Promise<ConnectResult> {
  const onAbort = () => {
    if (!master.handedOff) for (const l of legs) l.closeInBackground({ cause: 'normal_clearing', by: 'local', why: 'connect_aborted', announce: true });
  };
  if (signal.aborted) {
    onAbort();
    throw abortError(signal);
  }
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    // while the legs ring, a pickup (media-app/pbx/pickup.ts) may answer in their place
    const pickup = offerPickup(master, legs);
    const outcome = new RingOutcome();
    const ringTimer =
      opts.noAnswerMs !== undefined
        ? setTimeout(() => {
            // a leg that attached its dialog has answered: the answer came first
            if (legs.some((l) => l.answered) || !outcome.decide('rang_out')) return;
            pickup.withdraw();
            for (const l of legs) l.closeInBackground({ cause: 'no_answer', by: 'local', why: 'no_answer_timeout', announce: true });
          }, opts.noAnswerMs)
        : null;
    let winner = await firstAnswer(master, legs, dialer, pickup.picked).finally(() => {
      pickup.withdraw();
      if (ringTimer) clearTimeout(ringTimer);
    });
    if (winner && !outcome.decide('answered')) {
      // a pickup after the time ran out: too late, as a late 200 OK is
      winner.closeInBackground({ cause: 'normal_clearing', by: 'local', why: 'answered_after_no_answer_timeout', announce: true });
      winner = null;
    }
    for (const l of legs) if (l !== winner) l.closeInBackground({ cause: 'normal_clearing', by: 'local', why: 'answered_elsewhere', announce: true });
    if (outcome.rangOut) return { answered: false, hangup_reason: 'noanswer', ended_by: master.isEnded ? 'master' : 'destination' };
    if (!winner) {
      const reasons = legs.map((l) => l.row.hangup_reason).filter(Boolean);
      return { answered: false, hangup_reason: reasons[0] ?? 'failed', ended_by: master.isEnded ? 'master' : 'destination' };
    }
    if (master.isEnded) {
      await winner.hangup('normal');
      return { answered: true, hangup_reason: winner.row.hangup_reason, ended_by: 'master' };
    }
    await master.answer();
    // the master's flow waits on the bridge: when the destination side leaves, it goes on
    let bridge: Bridge;
    try {
      bridge = await Bridge.open(master, winner, { kind: 'return_to_flow', owner: master }, master.deps.logger);
    } catch (err) {
      // a side ended while the master answered: as if the bridge had opened and that side left at once
      if (!(err instanceof BridgeError) || !(master.isEnded || winner.isEnded)) throw err;
      if (master.isEnded) await winner.hangup('normal');
      return { answered: true, hangup_reason: winner.row.hangup_reason, ended_by: master.isEnded ? 'master' : 'destination' };
    }
    const bridgedAt = Date.now();
    const endBridge = (why: string) => {
      const b = bridge.parties.b;
      if (b instanceof CallSession) b.closeInBackground({ cause: 'normal_clearing', by: 'local', why, announce: true });
    };
    const onDigit = (digit: string) => {
      if (digit === '*') endBridge('hangup_on_star');
    };
    if (opts.hangupOnStar) master.on('dtmf', onDigit);
    // a recording that cannot start leaves the bridge as it is (the result carries no recording)
    // one already running on the call (a recording_start before the connect) is left alone: not this bridge's
    const recording =
      opts.record && !master.recordings.activeId
        ? await master.recordings.start({ format: 'wav', end_of_silence: 0, end_of_key: 'none', duration: 0, beep_start: false }).catch((err: Error) => {
            master.deps.logger.warn({ err: err.message, call: master.id }, 'connect: the recording did not start');
            return null;
          })
        : null;
    const limit = opts.durationLimitMs ? setTimeout(() => endBridge('duration_limit'), opts.durationLimitMs) : null;
    const end = await bridge.ended.finally(() => {
      if (limit) clearTimeout(limit);
      master.off('dtmf', onDigit);
    });
    // slot a is the master's (or whoever a transfer put in its place); merged: a REFER with Replaces took it
    const bridgedMs = Date.now() - bridgedAt;
    if (recording) await master.recordings.stop();
    const b = end.b instanceof CallSession ? end.b : winner;
    return {
      answered: true,
      hangup_reason: b.row.hangup_reason,
      ended_by: end.slot === 'b' ? 'destination' : 'master',
      bridged_ms: bridgedMs,
      ...(recording ? { recording_id: recording.recording_id } : {}),
    };
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
