/**
 * The node's drachtio connection to sip-server dropped: the SIP dialogs and transactions of its calls
 * are gone with it (a restarted sip-server holds none; a sip-server still running ended them as
 * orphans, or keeps them out of reach of the reconnected application: 481). Every call of this node
 * with a SIP side through that connection (an inbound INVITE, our INVITE, an answered SIP dialog) is
 * closed at once as `sip_server_gone`, without a BYE, CANCEL or final response it could not send
 * (`CloseReason.sipGone`): its record is hung up and charged, its flow ends, its endpoint is freed.
 * Internal calls (outbound/internal.ts: no SIP) stay, unless chained to a call closed here. The far ends
 * of the answered dialogs get their BYE once the connection is back (sip-gone-bye.ts).
 * docs/reliability.md "Faults and what they cost".
 */
import type { Logger } from 'pino';
import type { CallRegistry, OwnedCall } from './registry';
import { CallSession } from './session';
import { onSrfClosed, onSrfConnected, type Srf } from '../kit/srf';
import { GoneByes, type ByeSender } from './sip-gone-bye';

/** The `why` (the 'hangup' event's reason) of a call closed because its sip-server connection dropped. */
export const SIP_SERVER_GONE = 'sip_server_gone';

/**
 * Closes every such call. The closes start together, before any of them awaits: each call takes this
 * reason before a chained leg's or a bridge's close could reach it with one that would send a BYE.
 * Each answered dialog is kept in `byes` for the BYE its far end gets once sip-server is back.
 */
export function endSipGoneCalls(calls: CallRegistry<OwnedCall>, logger: Logger, byes: GoneByes): Promise<unknown> {
  const gone = calls.all().filter((c): c is CallSession => c instanceof CallSession && !c.isEnded && c.viaSipServer);
  if (!gone.length) return Promise.resolve();
  logger.warn({ calls: gone.map((c) => c.id), why: SIP_SERVER_GONE }, 'sip-server connection lost: its calls are ended');
  for (const c of gone) if (c.dialog) byes.keep(c.dialog);
  return Promise.allSettled(
    gone.map((c) =>
      // an answered call hangs up from our side (terminating: hangup_by local); one not answered fails
      c.close({ cause: 'failure', by: 'local', why: SIP_SERVER_GONE, announce: c.answered, sipGone: true }),
    ),
  );
}

/**
 * The node's watch on its drachtio connection: when it drops, the calls with a SIP side end (above);
 * when it is up again, the far ends of their answered dialogs get a BYE (sip-gone-bye.ts).
 */
export function watchSipServer(srf: Srf, calls: CallRegistry<OwnedCall>, logger: Logger): void {
  const byes = new GoneByes(logger);
  onSrfClosed(srf, () => void endSipGoneCalls(calls, logger, byes));
  onSrfConnected(srf, () => byes.sendAll(srf as unknown as ByeSender));
}
