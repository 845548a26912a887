// What the stack reads and stamps on a message as it arrives: received/rport on the top Via (RFC 3261
// 18.2.1, RFC 3581 4), the proxy loop hash (RFC 3261 16.3 item 4), a CSeq method that may be malformed.
import { createHash } from 'node:crypto';
import type { SipMessage, SipRequest, SourceInfo } from './message';

/** Add received (and fill rport) on the top Via of an incoming request (RFC 3261 18.2.1, RFC 3581 4). */
export function stampVia(req: SipRequest, src: SourceInfo): void {
  const raw = req.headers.get('Via');
  if (raw === undefined) return;
  const via = req.topVia!;
  const host = via.host.startsWith('[') ? via.host.slice(1, -1) : via.host;
  let changed = false;
  if (host !== src.address || 'rport' in via.params) {
    via.params.received = src.address;
    changed = true;
  }
  if ('rport' in via.params) {
    via.params.rport = String(src.port);
    changed = true;
  }
  if (changed) req.headers.replaceFirst('Via', via.toString());
}

export function loopHash(req: SipRequest): string {
  let fromTag = '',
    toTag = '',
    seq = '';
  try {
    fromTag = req.fromTag ?? '';
    toTag = req.toTag ?? '';
    seq = String(req.cseq.seq);
  } catch {
    /* best effort */
  }
  return createHash('sha1')
    .update(`${req.uri}|${req.callId}|${fromTag}|${toTag}|${seq}|${req.headers.get('Proxy-Require') ?? ''}`)
    .digest('base64url')
    .slice(0, 10);
}

export function safeCSeqMethod(m: SipMessage): string {
  try {
    return m.cseq.method;
  } catch {
    return 'unknown';
  }
}

/** Proxy loop (RFC 3261 16.3 item 4): one of our Vias (at a listening point of ours) carries this very request's loop hash. */
export function isProxyLoop(req: SipRequest, ours: readonly { advertisedHost: string; port: number }[]): boolean {
  const vias = req.headers.getAll('Via');
  if (vias.length < 2) return false;
  let hash: string | undefined;
  for (const v of req.vias) {
    const b = v.branch;
    if (!b || !b.includes('.')) continue;
    if (!ours.some((l) => l.advertisedHost === v.host && l.port === v.port)) continue;
    hash ??= loopHash(req);
    if (b.endsWith(`.${hash}`)) return true;
  }
  return false;
}
