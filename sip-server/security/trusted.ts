// Sources the flood protection never bans: what authenticated, as the stack sees it in the
// application's answers. The registrar and the call router live in media-app; sip-server forwards
// their REGISTERs and INVITEs and sees the finals they send back, so it learns from those (no
// message of its own on the drachtio protocol, no shared store, nothing a real drachtio-server
// application would have to do differently):
//   - a 2xx to a REGISTER: the request's source address:port is a registered contact for as long as
//     the 2xx grants its Contact (plus a grace for the refresh); a 2xx that removes it ends that;
//   - a 2xx to an out-of-dialog INVITE with credentials (an extension or a digest trunk): its
//     source address:port, for an hour after the last one;
//   - a 2xx to an out-of-dialog INVITE without credentials: the application accepted the caller by
//     its address (a trunk's or provider's configured address), so that whole address, for an hour.
import { parseNameAddr, splitList, type SipRequest, type SipResponse } from '../message';

export type Trust =
  | { scope: 'contact'; address: string; port: number; seconds: number }
  /** `port`: the port the accepted request came from, trusted as a contact too (the trunk's own port). */
  | { scope: 'address'; address: string; port?: number; seconds: number };

/** Grace after a registration's expiry (phones refresh shortly before it). */
const REGISTER_GRACE_SEC = 60;
/** How long an accepted INVITE keeps its source trusted. */
const INVITE_TRUST_SEC = 3600;

/** What an application's final response to `req` says about the request's source (undefined: nothing). */
export function trustFromAnswer(req: SipRequest, res: SipResponse): Trust | undefined {
  const src = req.source;
  if (!src || res.status < 200 || res.status >= 300) return undefined;
  let toTag: string | undefined;
  try {
    toTag = req.toTag;
  } catch {
    return undefined;
  }
  if (req.method === 'REGISTER') {
    const seconds = grantedSeconds(req, res);
    return { scope: 'contact', address: src.address, port: src.port, seconds: seconds > 0 ? seconds + REGISTER_GRACE_SEC : 0 };
  }
  if (req.method !== 'INVITE' || toTag !== undefined) return undefined;
  const credentials = req.headers.has('Proxy-Authorization') || req.headers.has('Authorization');
  return credentials ? { scope: 'contact', address: src.address, port: src.port, seconds: INVITE_TRUST_SEC } : { scope: 'address', address: src.address, port: src.port, seconds: INVITE_TRUST_SEC };
}

/** Seconds the 2xx grants the REGISTER's own Contact (its expires in the 2xx's binding list), 0 when removed. */
function grantedSeconds(req: SipRequest, res: SipResponse): number {
  const ours = contacts(req.headers.getAll('Contact'));
  if (!ours.length) return 0; // a query or "*": no binding of this source is created
  const headerExpires = Number(req.headers.get('Expires') ?? NaN);
  let best = 0;
  for (const c of contacts(res.headers.getAll('Contact'))) {
    const mine = ours.find((o) => o.uri === c.uri);
    if (!mine) continue;
    const e = Number(c.expires ?? mine.expires ?? headerExpires);
    if (Number.isFinite(e) && e > best) best = e;
  }
  return best;
}

function contacts(values: string[]): { uri: string; expires?: string }[] {
  const out: { uri: string; expires?: string }[] = [];
  for (const v of values) {
    for (const part of splitList(v)) {
      try {
        const n = parseNameAddr(part);
        if (!n.wildcard) out.push({ uri: n.uri.toString(), expires: n.params.expires ?? undefined });
      } catch {
        /* a malformed Contact trusts nothing */
      }
    }
  }
  return out;
}

/** Trusted contacts (address:port) and addresses, each until a time; swept lazily. */
export class TrustedSources {
  private readonly contactsUntil = new Map<string, number>();
  private readonly addressesUntil = new Map<string, number>();

  apply(t: Trust, now = Date.now()): void {
    if (t.scope === 'address' && t.port !== undefined) this.apply({ scope: 'contact', address: t.address, port: t.port, seconds: t.seconds }, now);
    const map = t.scope === 'contact' ? this.contactsUntil : this.addressesUntil;
    const key = t.scope === 'contact' ? contactKey(t.address, t.port) : t.address;
    if (t.seconds > 0) map.set(key, Math.max(map.get(key) ?? 0, now + t.seconds * 1000));
    else map.delete(key);
  }

  isContact(address: string, port: number, now = Date.now()): boolean {
    return (this.contactsUntil.get(contactKey(address, port)) ?? 0) > now;
  }

  isAddress(address: string, now = Date.now()): boolean {
    return (this.addressesUntil.get(address) ?? 0) > now;
  }

  sweep(now = Date.now()): void {
    for (const m of [this.contactsUntil, this.addressesUntil]) for (const [k, until] of m) if (until <= now) m.delete(k);
  }
}

export const contactKey = (address: string, port: number): string => `${address}|${port}`;
