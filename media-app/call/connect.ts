/**
 * The connect action (and extension-to-extension calls): every destination is dialled at once as a
 * chained leg of the master (its child in the call tree), the first that answers is bridged to the
 * master, the rest are hung up, and the result comes when the bridge ends. A transfer may put
 * another call in either side's place (CallSession.replaceWith): the bridge follows it.
 */
import type { ConnectResult } from '../flow/call-port';
import { abortError } from '../flow/clock';
import type { CallSession } from './session';

export interface ConnectLegs {
  /** Dials one prepared leg; true when it answered. */
  dial(leg: CallSession): Promise<boolean>;
}

/** Resolves with the first leg to answer, or null (none did, or the master ended first). */
function firstAnswer(master: CallSession, legs: CallSession[], dialer: ConnectLegs): Promise<CallSession | null> {
  return new Promise<CallSession | null>((resolve) => {
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
    master.done.then(() => resolve(null), () => resolve(null));
  });
}

export async function bridgeFirstAnswer(master: CallSession, legs: CallSession[], dialer: ConnectLegs, signal: AbortSignal): Promise<ConnectResult> {
  const onAbort = () => {
    if (!master.replacedBy) for (const l of legs) l.closeInBackground({ cause: 'normal_clearing', by: 'local', why: 'connect_aborted', announce: true });
  };
  if (signal.aborted) {
    onAbort();
    throw abortError(signal);
  }
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const winner = await firstAnswer(master, legs, dialer);
    for (const l of legs) if (l !== winner) l.closeInBackground({ cause: 'normal_clearing', by: 'local', why: 'answered_elsewhere', announce: true });
    if (!winner) {
      const reasons = legs.map((l) => l.row.hangup_reason).filter(Boolean);
      return { answered: false, hangup_reason: reasons[0] ?? 'failed', ended_by: master.isEnded ? 'master' : 'destination' };
    }
    if (master.isEnded) {
      await winner.hangup('normal');
      return { answered: true, hangup_reason: winner.row.hangup_reason, ended_by: 'master' };
    }
    await master.answer();
    const [a0, b0] = [master.endpoint, winner.endpoint];
    if (!a0 || !b0) throw new Error('connect: a leg has no media');
    await a0.bridge(b0);
    return await followBridge(master, winner);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Waits until one side of the bridge leaves, following replacements; hangs up the other side. */
async function followBridge(master: CallSession, winner: CallSession): Promise<ConnectResult> {
  let [a, b] = [master, winner];
  const replaced = (c: CallSession) => new Promise<CallSession>((r) => c.once('replaced', r));
  for (;;) {
    const r = await Promise.race([
      a.done.then(() => ({ side: 'a' as const })),
      b.done.then(() => ({ side: 'b' as const })),
      replaced(a).then((by) => ({ side: 'ra' as const, by })),
      replaced(b).then((by) => ({ side: 'rb' as const, by })),
    ]);
    if (r.side === 'ra') a = r.by;
    else if (r.side === 'rb') b = r.by;
    else if (r.side === 'a') {
      await b.hangup('normal');
      return { answered: true, hangup_reason: b.row.hangup_reason, ended_by: 'master' };
    } else {
      if (a === master) await master.endpoint?.unbridge().catch(() => undefined);
      else await a.hangup('normal');
      return { answered: true, hangup_reason: b.row.hangup_reason, ended_by: 'destination' };
    }
  }
}
