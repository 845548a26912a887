/**
 * The BYE a call's far end gets once sip-server is back (docs/reliability.md "Faults and what they cost").
 * When the node's drachtio connection drops, sip-gone.ts ends its calls without a BYE: the dialogs died
 * with sip-server, and over the dead socket the BYE would wait for ever. The phone or carrier on the
 * other side still holds its dialog, hears silence and, if it hangs up, gets no answer. So each answered
 * dialog's facts (Call-ID, tags, the far end's Contact, the route set) are kept here, and the moment the
 * connection is back each gets an out-of-dialog BYE built from them, as drachtio-server sends one with
 * the given From/To/Call-ID/CSeq (sip-server/drachtio/message-builder.ts honours them the same way),
 * with a Reason saying why. A dialog older than the window when the connection returns is dropped:
 * its far end has given up long ago (a phone whose BYE got no answer ends the call after 32 s).
 */
import type { Logger } from 'pino';

/** How long after the drop a kept dialog still gets its BYE. */
export const GONE_BYE_WINDOW_MS = 120_000;

/** The Reason (RFC 3326) of those BYEs: the SIP side of the call was lost (cause 41, temporary failure). */
export const GONE_BYE_REASON = 'Q.850;cause=41;text="SIP server restarted"';

interface Headers {
  get(name: string): string | undefined;
}

/** What a drachtio-srf Dialog holds of its INVITE transaction (beyond the CallDialog face the call uses). */
interface SrfDialogFacts {
  type: 'uac' | 'uas';
  sip: { callId: string; localTag: string; remoteTag: string };
  remote: { uri: string };
  /** the INVITE: received (uas) or as sent (uac) */
  req: Headers;
  /** the final response: as sent (uas) or received (uac) */
  res: Headers;
}

/** The out-of-dialog request that ends the far end's dialog. */
export interface GoneBye {
  uri: string;
  headers: Record<string, string>;
  /** when the dialog was lost (ms) */
  at: number;
  callId: string;
}

function isSrfDialog(d: unknown): d is SrfDialogFacts {
  const x = d as Partial<SrfDialogFacts> | null;
  return !!x && (x.type === 'uac' || x.type === 'uas') && typeof x.req?.get === 'function' && typeof x.res?.get === 'function' && !!x.sip?.callId;
}

/** The Record-Route entries of a header value, in order (commas inside <> or quotes do not split). */
export function routeEntries(value: string | undefined): string[] {
  if (!value) return [];
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '<') depth++;
    else if (!quoted && ch === '>') depth--;
    else if (!quoted && depth === 0 && ch === ',') {
      out.push(value.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(value.slice(start).trim());
  return out.filter(Boolean);
}

/**
 * The BYE of `dialog` (RFC 3261 §12.2.1.1): Request-URI the far end's Contact, From our side with our tag,
 * To theirs with their tag, the dialog's Call-ID, a CSeq above any we sent in it (seconds since 2023:
 * sip-server numbers a dialog's requests up from its first), Route the route set (§12.1.1: the
 * Record-Route of the INVITE as received, or of the 200 reversed). Null when it is not a SIP dialog.
 */
export function goneBye(dialog: unknown, now: number): GoneBye | null {
  if (!isSrfDialog(dialog)) return null;
  const { req, res, sip } = dialog;
  const uas = dialog.type === 'uas';
  const ours = uas ? `${req.get('To') ?? ''};tag=${sip.localTag}` : (req.get('From') ?? '');
  const theirs = uas ? (req.get('From') ?? '') : (res.get('To') ?? '');
  if (!ours || !theirs || !dialog.remote.uri) return null;
  const routes = uas ? routeEntries(req.get('Record-Route')) : routeEntries(res.get('Record-Route')).reverse();
  const headers: Record<string, string> = {
    From: ours,
    To: theirs,
    'Call-ID': sip.callId,
    CSeq: `${Math.floor(now / 1000) - 1_672_531_200} BYE`,
    Reason: GONE_BYE_REASON,
  };
  if (routes.length) headers.Route = routes.join(', ');
  return { uri: dialog.remote.uri, headers, at: now, callId: sip.callId };
}

/** The kept BYEs still within the window at `now`, and how many are not. */
export function withinWindow(kept: readonly GoneBye[], now: number): { due: GoneBye[]; dropped: number } {
  const due = kept.filter((b) => now - b.at <= GONE_BYE_WINDOW_MS);
  return { due, dropped: kept.length - due.length };
}

interface SentRequest {
  on(event: 'response', fn: (res: { status: number }) => void): void;
}
/** What sends them: drachtio-srf's `request(uri, opts, cb)`. */
export type ByeSender = { request(uri: string, opts: object, cb: (err: Error | null, sent: SentRequest) => void): void };

/** The BYEs kept while sip-server is away, sent when it is back. */
export class GoneByes {
  private kept: GoneBye[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Keeps the BYE of the call's dialog (a no-op for a dialog that is not SIP's). */
  keep(dialog: unknown): void {
    const bye = goneBye(dialog, this.now());
    if (bye) this.kept.push(bye);
  }

  get size(): number {
    return this.kept.length;
  }

  /** The connection is back: each kept BYE still within the window goes out; all are forgotten. */
  sendAll(srf: ByeSender): number {
    const { due, dropped } = withinWindow(this.kept, this.now());
    this.kept = [];
    if (dropped) this.logger.info({ dropped }, 'dialogs lost longer ago than the window: no BYE');
    for (const b of due) {
      srf.request(b.uri, { method: 'BYE', headers: b.headers }, (err, sent) => {
        if (err) return this.logger.warn({ callId: b.callId, err: err.message }, 'BYE after the sip-server restart not sent');
        sent.on('response', (r) => {
          if (r.status >= 200) this.logger.info({ callId: b.callId, status: r.status }, 'BYE after the sip-server restart answered');
        });
      });
    }
    return due.length;
  }
}
