// Registrations made over WebSocket flows (RFC 7118 §5, RFC 5626): a browser's binding lives only as
// long as its connection. sip-server has no registrar of its own, so when a WebSocket connection ends
// it tells the application's registrar: one un-REGISTER per address of record bound over that
// connection, carrying FLOW_CLOSED_HEADER and the connection's own source. The registrar removes only
// the bindings whose source is that very flow (address, port, transport), so the mark gives nobody
// power over anyone else's bindings; a request from the network carrying it is stripped of it anyway.
import { FLOW_CLOSED_HEADER } from '../core/registrar/bindings';
import { Headers, SipRequest, SipResponse, SipUri, newBranch, parseNameAddr, randomToken, type SourceInfo } from './message';

export { FLOW_CLOSED_HEADER };

/** Addresses of record remembered per connection (a browser registers one or two). */
const MAX_AORS_PER_FLOW = 16;

export class FlowRegistrations {
  private readonly byFlow = new Map<string, Set<string>>();

  /** A REGISTER over a WebSocket flow was answered: remember its address of record on a 2xx. */
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
    let set = this.byFlow.get(id);
    if (!set) this.byFlow.set(id, (set = new Set()));
    if (set.size < MAX_AORS_PER_FLOW) set.add(aor);
  }

  /** The flow ended: the un-REGISTERs to hand to the application (none if nothing registered over it). */
  closed(src: SourceInfo): SipRequest[] {
    const id = src.connectionId;
    const aors = id ? this.byFlow.get(id) : undefined;
    if (!id || !aors) return [];
    this.byFlow.delete(id);
    return [...aors].map((aor) => unregister(aor, src, id));
  }
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
