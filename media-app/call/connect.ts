/**
 * The connect action (and extension-to-extension calls): every destination is dialled at once as a
 * chained leg of the master (its child in the call tree), the first that answers is bridged to the
 * master (a Bridge, bridge.ts, whose rule returns the master to its flow when the destination leaves),
 * the rest are hung up, and the result comes when the bridge ends. A transfer may put another call in
 * either side's place (Bridge.replace): the bridge keeps the slots, so the result still says which
 * side ended it.
 */
import type { HoldMusicOption } from '../../core/flow/options/common';
import type { ConnectResult } from '../flow/call-port';
import { abortError } from '../kit/clock';
import { Bridge, BridgeError } from './bridge';
import { chooseBridgeMusic } from './hold-music';
import { CallSession } from './session';
import { offerPickup } from './pickable';
import { dialedSip } from './dial';

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

/**
 * Resolves with the first leg to answer (or the call that picked the ringing legs up), or null: none
 * did, the master ended first, or the ring time ran out (`rangOut`: without waiting for the legs' ends,
 * as a leg that never had a provisional answer cannot be cancelled and ends only with its transaction).
 */
function firstAnswer(master: CallSession, legs: CallSession[], dialer: ConnectLegs, picked: Promise<CallSession>, rangOut: Promise<void>): Promise<CallSession | null> {
  return new Promise<CallSession | null>((resolve) => {
    void picked.then(resolve);
    void rangOut.then(() => resolve(null));
    let left = legs.length;
    if (!left) resolve(null);
    const unanswered = new Set<CallSession>();
    const lost = (leg: CallSession) => {
      if (unanswered.has(leg)) return;
      unanswered.add(leg);
      if (--left === 0) resolve(null);
    };
    for (const leg of legs) {
      dialer.dial(leg).then(
        (answered) => (answered ? resolve(leg) : lost(leg)),
        (err: Error) => {
          leg.closeInBackground({ cause: 'failure', by: 'local', why: `dial failed: ${err.message}`, announce: true });
          lost(leg);
        },
      );
      // a leg ended before its dial settled (its dial timeout: an INVITE with no provisional answer is
      // cancelled only when one comes, its transaction ends up to 32 s later) is not waited for
      leg.done.then(
        () => lost(leg),
        () => lost(leg),
      );
    }
    master.done.then(
      () => resolve(null),
      () => resolve(null),
    );
  });
}

/**
 * Why no destination answered: `busy` when one said busy and none of the others ever rang (a device
 * gone without unregistering answers nothing: the one reached was busy); else the first leg's reason.
 */
function unansweredReason(legs: CallSession[]): string {
  const busy = legs.some((l) => l.row.hangup_reason === 'busy');
  const rang = legs.some((l) => l.row.hangup_reason !== 'busy' && l.row.tm_ringing !== null);
  if (busy && !rang) return 'busy';
  return legs.map((l) => l.row.hangup_reason).find(Boolean) ?? 'failed';
}

/** The ring time ran out (RingOutcome): `busy` as unansweredReason says, else `noanswer`. */
function rangOutReason(legs: CallSession[]): string {
  return unansweredReason(legs) === 'busy' ? 'busy' : 'noanswer';
}

/**
 * durationLimitMs: the bridge's longest life after the answer; then the destination side is hung up
 * (ended_by destination) and the master's flow goes on (Twilio's Dial timeLimit). record: the master
 * is recorded (both directions mixed) from the answer until the bridge ends (Twilio's Dial record).
 * hangupOnStar: a * from the master hangs up the destination side (Twilio's Dial hangupOnStar).
 * holdMusic: what a held side of the bridge hears (hold-music.ts), for the bridge's life.
 * noAnswerMs: how long the legs ring before they are cancelled and the result is not answered with
 * hangup_reason `noanswer` (decided once against an answer: RingOutcome).
 */
export async function bridgeFirstAnswer(...args: Parameters<typeof bridgeLegs>): Promise<ConnectResult> {
  const [, legs] = args;
  const { leg, ...r } = await bridgeLegs(...args);
  return { ...r, ...legFacts(leg ?? legs[0]) };
}

/** DialCallSid and DialSip* of the connect's destination leg. */
function legFacts(leg: CallSession | undefined): Pick<ConnectResult, 'leg_id' | 'sip_call_id' | 'sip_status'> {
  if (!leg) return {};
  const sip = dialedSip(leg);
  return { leg_id: leg.id, ...(sip ? { sip_call_id: sip.callId, ...(sip.status ? { sip_status: sip.status } : {}) } : {}) };
}

type ConnectOpts = { durationLimitMs?: number; record?: boolean; hangupOnStar?: boolean; noAnswerMs?: number; holdMusic?: HoldMusicOption };

/** bridgeFirstAnswer without the leg's facts: the result names the leg that answered. */
async function bridgeLegs(master: CallSession, legs: CallSession[], dialer: ConnectLegs, signal: AbortSignal, opts: ConnectOpts = {}): Promise<ConnectResult & { leg?: CallSession }> {
  const onAbort = () => {
    if (!master.handedOff) for (const l of legs) l.closeInBackground({ cause: 'normal_clearing', by: 'local', why: 'connect_aborted', announce: true });
  };
  if (signal.aborted) {
    onAbort();
    throw abortError(signal);
  }
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const { winner, rangOut } = await ringLegs(master, legs, dialer, opts.noAnswerMs);
    if (rangOut) return { answered: false, hangup_reason: rangOutReason(legs), ended_by: master.isEnded ? 'master' : 'destination' };
    if (!winner) return { answered: false, hangup_reason: unansweredReason(legs), ended_by: master.isEnded ? 'master' : 'destination' };
    if (master.isEnded) {
      await winner.hangup('normal');
      return { answered: true, hangup_reason: winner.row.hangup_reason, ended_by: 'master', leg: winner };
    }
    await master.answer();
    return { ...(await holdBridge(master, winner, opts)), leg: winner };
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Rings the legs until one answers (or a pickup takes them), the master ends, none is left, or the
 * ring time (`noAnswerMs`) runs out; every leg but the winner is then hung up.
 */
async function ringLegs(master: CallSession, legs: CallSession[], dialer: ConnectLegs, noAnswerMs: number | undefined): Promise<{ winner: CallSession | null; rangOut: boolean }> {
  // while the legs ring, a pickup (media-app/pbx/pickup.ts) may answer in their place
  const pickup = offerPickup(master, legs);
  const outcome = new RingOutcome();
  let ranOut!: () => void;
  const rangOut = new Promise<void>((r) => (ranOut = r));
  const ringTimer =
    noAnswerMs !== undefined
      ? setTimeout(() => {
          // a leg that attached its dialog has answered: the answer came first
          if (legs.some((l) => l.answered) || !outcome.decide('rang_out')) return;
          pickup.withdraw();
          for (const l of legs) l.closeInBackground({ cause: 'no_answer', by: 'local', why: 'no_answer_timeout', announce: true });
          ranOut();
        }, noAnswerMs)
      : null;
  let winner = await firstAnswer(master, legs, dialer, pickup.picked, rangOut).finally(() => {
    pickup.withdraw();
    if (ringTimer) clearTimeout(ringTimer);
  });
  if (winner && !outcome.decide('answered')) {
    // a pickup after the time ran out: too late, as a late 200 OK is
    winner.closeInBackground({ cause: 'normal_clearing', by: 'local', why: 'answered_after_no_answer_timeout', announce: true });
    winner = null;
  }
  for (const l of legs) if (l !== winner) l.closeInBackground({ cause: 'normal_clearing', by: 'local', why: 'answered_elsewhere', announce: true });
  return { winner, rangOut: outcome.rangOut };
}

/** The answered master and winner bridged until the bridge ends (timeLimit, hangupOnStar, record as asked). */
async function holdBridge(master: CallSession, winner: CallSession, opts: ConnectOpts): Promise<ConnectResult> {
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
  chooseBridgeMusic(bridge, opts.holdMusic);
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
}
