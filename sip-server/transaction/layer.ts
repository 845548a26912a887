// Transaction matching (RFC 3261 17.1.3 and 17.2.3, with the RFC 2543 fallback) and bookkeeping.
import { MAGIC_COOKIE, SipRequest, SipResponse } from '../message';
import type { ClientTransaction } from './client';
import type { ServerTransaction } from './server';
import type { InviteServerTransaction } from './server-invite';

// The keys below are made with join(), which writes one flat string. A template literal makes a tree of
// its parts, and the header values among them are slices of the received message's text, which V8 keeps
// whole for as long as a slice lives: a key held 32 s by a transaction or the accepted table kept a
// copy of every message it came from (~7 MB at 300 calls/s).

/** Server transaction key; ACK maps to its INVITE; `asMethod` lets a CANCEL find its INVITE. */
export function serverKey(req: SipRequest, asMethod?: string): string {
  const via = req.topVia!;
  const method = asMethod ?? (req.method === 'ACK' ? 'INVITE' : req.method);
  const branch = via.branch;
  if (branch && branch.startsWith(MAGIC_COOKIE) && branch.length > MAGIC_COOKIE.length) {
    return [branch, '|', via.host, ':', via.port ?? '', '|', method].join('');
  }
  // RFC 2543 peers: no usable branch, match on the request's identity (17.2.3 last paragraph)
  return ['2543', req.uri, req.fromTag ?? '', req.callId, req.cseq.seq, `${via.host}:${via.port ?? ''}`, method].join('|');
}

/** Client transaction key: our branch plus the CSeq method. */
export function clientKey(msg: SipRequest | SipResponse): string | undefined {
  const via = msg.topVia;
  const branch = via?.branch;
  if (!branch) return undefined;
  return [branch, msg.cseq.method].join('|');
}

/** Dialog-ish key used to route the ACK for a 2xx to the INVITE server transaction it acknowledges. */
export function ackKey(req: SipRequest): string {
  return [req.callId, req.cseq.seq, req.fromTag ?? ''].join('|');
}

/** Key for merged-request detection (RFC 3261 8.2.2.2). */
export function mergeKey(req: SipRequest): string {
  const cseq = req.cseq;
  return [req.fromTag ?? '', req.callId, cseq.seq, cseq.method].join('|');
}

export class TransactionTable {
  readonly servers = new Map<string, ServerTransaction>();
  readonly clients = new Map<string, ClientTransaction>();
  /** INVITE server transactions in Accepted, by ackKey. */
  readonly accepted = new Map<string, InviteServerTransaction>();
  /** Requests without a To tag in progress, by mergeKey -> server key. */
  readonly merged = new Map<string, string>();

  get serverCount(): number {
    return this.servers.size;
  }
  get clientCount(): number {
    return this.clients.size;
  }

  clear(): void {
    for (const t of [...this.servers.values()]) t.destroy();
    for (const t of [...this.clients.values()]) t.destroy();
    this.servers.clear();
    this.clients.clear();
    this.accepted.clear();
    this.merged.clear();
  }
}
