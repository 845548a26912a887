// Registrations made over a connection (TCP, TLS, WebSocket: a flow, RFC 5626). sip-server has no
// registrar of its own; it reads the registrar's 2xx answers to REGISTERs that came over a flow:
// - While a binding made over a TCP/TLS connection is unexpired, that connection is pinned open (the
//   idle sweep spares it, transport/stream.ts): the platform's calls to the phone go over it, and a
//   phone behind NAT can be reached no other way (RFC 5626 5, RFC 5923). The pin lasts until the
//   latest expiry the registrar granted the bindings made over it, is moved by each re-REGISTER, and
//   goes with an un-REGISTER.
// - A browser's binding lives only as long as its WebSocket connection (RFC 7118 5): when that ends,
//   the application's registrar is told, one un-REGISTER per address of record bound over it,
//   carrying FLOW_CLOSED_HEADER and the connection's own source. The registrar removes only the
//   bindings whose source is that very flow (address, port, transport), so the mark gives nobody
//   power over anyone else's bindings; a request from the network carrying it is stripped of it anyway.
import { FLOW_CLOSED_HEADER } from '../core/registrar/bindings';
import { Headers, SipRequest, SipResponse, SipUri, newBranch, parseNameAddr, randomToken, splitList, type NameAddr, type SourceInfo } from './message';

export { FLOW_CLOSED_HEADER };

/** Addresses of record remembered per connection (a browser registers one or two). */
const MAX_AORS_PER_FLOW = 16;
/** Contacts remembered per address of record and connection. */
const MAX_CONTACTS_PER_AOR = 16;
/** The key of the pin a flow's registrations hold on its connection. */
export const REGISTRATION_PIN = 'registrations';

/** How the registrations hold their connection open (TransportLayer.pin/unpin). */
export interface ConnectionPins {
  pin(connectionId: string, key: string, until?: number): void;
  unpin(connectionId: string, key: string): void;
}

/** One flow's registrations: address of record → contact URI → expiry (epoch ms). */
type FlowBindings = Map<string, Map<string, number>>;

export class FlowRegistrations {
  private readonly byFlow = new Map<string, FlowBindings>();

  constructor(
    private readonly pins: ConnectionPins,
    private readonly now: () => number = Date.now,
  ) {}

  /** A REGISTER over a flow was answered: on a 2xx, remember what it bound, and pin the connection while any binding lasts. */
  note(req: SipRequest, res: SipResponse): void {
    const id = req.source?.connectionId;
    if (!id || res.status < 200 || res.status >= 300) return;
    let aor: string;
    try {
      const to = parseNameAddr(req.headers.get('To') ?? '').uri;
      if (!(to instanceof SipUri)) return;
      aor = `${to.scheme}:${to.user ? `${to.user}@` : ''}${to.host}`;
    } catch {
      return;
    }
    const asked = contactsOf(req);
    const granted = contactsOf(res);
    let flow = this.byFlow.get(id);
    if (!flow) this.byFlow.set(id, (flow = new Map<string, Map<string, number>>()));
    let bound = flow.get(aor);
    if (!bound) {
      if (flow.size >= MAX_AORS_PER_FLOW) return;
      flow.set(aor, (bound = new Map<string, number>()));
    }
    const now = this.now();
    if (asked.some((c) => c.wildcard)) bound.clear();
    for (const c of asked) {
      if (c.wildcard) continue;
      const uri = c.uri.toString();
      const secs = grantedSeconds(uri, granted, res.headers.get('Expires'));
      if (secs > 0 && (bound.has(uri) || bound.size < MAX_CONTACTS_PER_AOR)) bound.set(uri, now + secs * 1000);
      else bound.delete(uri);
    }
    this.repin(id, flow, now);
  }

  /** The flow ended: forget it; over a WebSocket, the un-REGISTERs to hand to the application. */
  closed(src: SourceInfo): SipRequest[] {
    const id = src.connectionId;
    const flow = id ? this.byFlow.get(id) : undefined;
    if (!id || !flow) return [];
    this.byFlow.delete(id);
    if (src.transport !== 'ws' && src.transport !== 'wss') return [];
    return [...flow.keys()].map((aor) => unregister(aor, src, id));
  }

  /** The pin lasts until the latest unexpired binding made over the flow; none left: unpinned. */
  private repin(id: string, flow: FlowBindings, now: number): void {
    let until = 0;
    for (const bound of flow.values()) {
      for (const [uri, at] of bound) {
        if (at <= now) bound.delete(uri);
        else until = Math.max(until, at);
      }
    }
    if (until > 0) this.pins.pin(id, REGISTRATION_PIN, until);
    else this.pins.unpin(id, REGISTRATION_PIN);
  }
}

/** Every Contact of a message, each element of a comma-separated value on its own; unreadable ones left out. */
function contactsOf(msg: SipRequest | SipResponse): NameAddr[] {
  const out: NameAddr[] = [];
  for (const value of msg.headers.getAll('Contact')) {
    for (const part of splitList(value)) {
      try {
        out.push(parseNameAddr(part));
      } catch {
        /* not a contact we can match: as if absent */
      }
    }
  }
  return out;
}

/**
 * The expiry (seconds) the registrar's 2xx grants a contact: its `expires` parameter, else the
 * answer's Expires, else 3600 (RFC 3261 10.2.1.1); 0 when the answer lists it not (removed).
 */
function grantedSeconds(uri: string, granted: NameAddr[], expiresHeader: string | undefined): number {
  const c = granted.find((g) => !g.wildcard && g.uri.toString() === uri);
  if (!c) return 0;
  const secs = Number(c.params.expires ?? expiresHeader ?? 3600);
  return Number.isFinite(secs) && secs > 0 ? secs : 0;
}

function unregister(aor: string, src: SourceInfo, flow: string): SipRequest {
  const host = aor.slice(aor.indexOf('@') + 1).replace(/^sips?:/, '');
  const sentBy = src.address.includes(':') ? `[${src.address}]` : src.address;
  const h = new Headers();
  h.append('Via', `SIP/2.0/${src.transport.toUpperCase()} ${sentBy}:${src.port};branch=${newBranch()};rport=${src.port};received=${src.address}`);
  h.append('Max-Forwards', '70');
  h.append('From', `<${aor}>;tag=${randomToken()}`);
  h.append('To', `<${aor}>`);
  h.append('Call-ID', `flow-closed-${randomToken(12)}`);
  h.append('CSeq', '1 REGISTER');
  h.append('Contact', '*');
  h.append('Expires', '0');
  h.append(FLOW_CLOSED_HEADER, flow);
  h.append('Content-Length', '0');
  const scheme = aor.startsWith('sips:') ? 'sips' : 'sip';
  const req = new SipRequest('REGISTER', `${scheme}:${host}`, h);
  req.source = src;
  return req;
}
