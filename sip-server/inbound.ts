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
