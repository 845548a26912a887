/**
 * The end of a leg media-app asks for (FsmrfCallEndpoint.destroy; a room's control leg, FsmrfMix.destroy).
 * drachtio-fsmrf's Endpoint.destroy sends `hangup` on the channel socket and resolves only when the
 * switch's BYE reaches media-app's dialog: after a sip-server drop (media-app/call/sip-gone.ts) that BYE
 * never comes, and when the BYE was handled before the hangup's CHANNEL_CALLSTATE (the dialog's 'destroy'
 * already emitted) it waits for ever too. Here the end is the first of: fsmrf's destroy (the BYE, or a leg
 * already ended), the channel socket's end (the switch closes it after the hangup: fsmrf asks for no
 * linger), the channel's CHANNEL_HANGUP_COMPLETE, or a deadline armed by this end and cleared when it
 * settles. The deadline is the dialog's as well: an end settled by the socket or the hangup event leaves it
 * armed until the switch's BYE frees media-app's dialog of the leg (fsmrf's destroy resolves: cleared); a
 * BYE that never comes (sip-server gone: the switch's BYE goes nowhere) does not leave the dialog in the
 * Srf's dialogs for ever, it is forgotten at the deadline, as it is when the switch answered nothing.
 * At the deadline the leg's channel socket is closed on media-app's side as well: a switch that answers
 * nothing (hung, or a blackholed link) would otherwise leave it open for ever after the leg gave up (the
 * switch hangs the channel up when it reads that close, as when its socket application returns).
 */
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import { eslSocket, onChannelEvent } from './leg-socket';
import { REAL_TIMERS, type LinkTimers } from './switch-link';

/** How long a leg's end waits for the switch (its socket's end, its hangup event, its BYE). */
export const LEG_END_MS = 4000;

/** What ended the wait: fsmrf's destroy (`bye`), the socket, the hangup event, the deadline, or fsmrf's hangup failing. */
export type LegEndBy = 'bye' | 'socket' | 'hangup-complete' | 'deadline' | 'failed';

/** media-app's dialog with the switch for the leg and its Srf, the part used here. */
interface LegDialog {
  connected?: boolean;
  srf?: { removeDialog(d: unknown): void };
}

/** Hangs `fs` up on the switch; resolves (never rejects) with what ended the wait, within `deadlineMs` on `timers`. */
export function endLeg(fs: FsEndpoint, timers: LinkTimers = REAL_TIMERS, deadlineMs = LEG_END_MS): Promise<LegEndBy> {
  // read before fsmrf's destroy: its esl::end handler drops the connection
  const conn = fs.conn;
  // the leg's channel socket, closed at the deadline (modesl nulls the field once closed, or disconnect() asked: none then);
  // a connection with no such field throws here, but never reaches here: LegSocket refused it when the leg was made
  const socket = conn && (conn as { socket?: unknown }).socket !== null ? eslSocket(conn, "the leg's channel connection") : null;
  // fsmrf's Endpoint#dialog (not in its declarations: types/drachtio-fsmrf.d.ts)
  const dialog = (fs as unknown as { dialog?: LegDialog | null }).dialog ?? null;
  return new Promise<LegEndBy>((resolve) => {
    let settled = false;
    let timer: unknown = null;
    let offHangup: (() => void) | null = null;
    const onSocketEnd = () => settle('socket');
    /** the wait's end: what ended it; the deadline stays armed for the dialog until the BYE or the deadline */
    const settle = (by: LegEndBy) => {
      if (settled) return;
      settled = true;
      offHangup?.();
      conn?.off('esl::end', onSocketEnd);
      resolve(by);
    };
    /** the dialog's end: freed by the BYE (or gone already), else forgotten at the deadline */
    const dialogEnded = (byDeadline: boolean) => {
      if (timer !== null) timers.clear(timer);
      timer = null;
      if (!byDeadline) return;
      forget(dialog);
      socket?.destroy();
    };
    conn?.once('esl::end', onSocketEnd);
    try {
      offHangup = onChannelEvent(fs, 'CHANNEL_HANGUP_COMPLETE', () => settle('hangup-complete'), { subscribe: true });
    } catch {
      // a connection already closing: its end (above) or the deadline settles
    }
    timer = timers.set(deadlineMs, () => {
      timer = null;
      dialogEnded(true);
      settle('deadline');
    });
    // synchronous throws of fsmrf's destroy (its dialog already gone) count as a failed hangup
    Promise.resolve()
      .then(() => fs.destroy())
      .then(
        () => (dialogEnded(false), settle('bye')),
        () => (dialogEnded(false), settle('failed')),
      );
  });
}

/** media-app's dialog of a leg whose switch did not answer: out of the Srf's dialogs, no request sent. */
function forget(dialog: LegDialog | null): void {
  if (!dialog?.connected) return;
  dialog.connected = false;
  dialog.srf?.removeDialog(dialog);
}
