/**
 * Turning an application's SIP template into the message we put on the wire, filling in what
 * drachtio-server fills in: Via (left to the stack), From/To tags, Call-ID, CSeq, Max-Forwards,
 * Contact, Content-Type for SDP, User-Agent, Content-Length (always recomputed).
 */
import { Headers, SipRequest, SipResponse, parseNameAddr, parseUri, randomToken, SipUri } from '../message';
import type { AppRequestTemplate, AppResponseTemplate } from './app-message';
import type { Dialog } from './dialogs';
import type { Endpoint } from './sip-port';

export class BuildError extends Error {}

/** headers the dialog or transaction owns; an application's value for them is ignored */
const DIALOG_OWNED = new Set(['from', 'to', 'call-id', 'cseq', 'via', 'content-length']);
const RESPONSE_OWNED = new Set(['from', 'to', 'call-id', 'cseq', 'via', 'content-length', 'record-route']);

export function contactFor(local: Endpoint): string {
  const t = local.transport === 'udp' ? '' : `;transport=${local.transport}`;
  return `<sip:${hostForUri(local.address)}:${local.port}${t}>`;
}

function hostForUri(address: string): string {
  return address.includes(':') && !address.startsWith('[') ? `[${address}]` : address;
}

/** SDP bodies get application/sdp; any other body without Content-Type is refused (drachtio does the same). */
function contentType(headers: Headers, body: string): void {
  if (!body || headers.has('Content-Type')) return;
  if (body.startsWith('v=0')) headers.set('Content-Type', 'application/sdp');
  else throw new BuildError('missing content-type');
}

export interface NewRequestContext {
  local: Endpoint;
  userAgent?: string;
}

/** A request outside any dialog (INVITE, REGISTER, OPTIONS, MESSAGE, SUBSCRIBE, ...). */
export function buildNewRequest(tpl: AppRequestTemplate, ctx: NewRequestContext): SipRequest {
  let ruri: SipUri;
  try {
    const u = parseUri(tpl.uri);
    if (!(u instanceof SipUri)) throw new Error('not a SIP URI');
    ruri = u;
  } catch {
    throw new BuildError(`invalid request-uri: ${tpl.uri}`);
  }
  const h = new Headers();
  const contact = contactFor(ctx.local);
  let from = tpl.headers.get('From');
  if (from) {
    // drachtio-srf writes `sip:<number>@localhost` for callingNumber: localhost means "this server"
    from = from.replace(/@localhost(?=[>;:]|$)/, `@${hostForUri(ctx.local.address)}:${ctx.local.port}`);
  } else {
    from = contact;
  }
  try {
    if (!parseNameAddr(from).tag) from = `${from};tag=${randomToken()}`;
  } catch {
    throw new BuildError(`invalid from value provided by client: ${from}`);
  }
  h.append('From', from);
  h.append('To', tpl.headers.get('To') ?? `<${ruri.toString()}>`);
  h.append('Call-ID', tpl.headers.get('Call-ID') ?? randomToken(12));
  h.append('CSeq', tpl.headers.get('CSeq') ?? `${1 + Math.floor(Math.random() * 9999)} ${tpl.method}`);
  h.append('Max-Forwards', tpl.headers.get('Max-Forwards') ?? '70');
  if ((tpl.method === 'INVITE' || tpl.method === 'SUBSCRIBE') && !tpl.headers.has('Contact')) h.append('Contact', contact);
  for (const [name, value] of tpl.headers) {
    const key = name.toLowerCase();
    if (DIALOG_OWNED.has(key) || key === 'max-forwards') continue;
    h.append(name, value);
  }
  if (ctx.userAgent && !h.has('User-Agent')) h.append('User-Agent', ctx.userAgent);
  contentType(h, tpl.body);
  return new SipRequest(tpl.method, ruri.toString(), h, tpl.body);
}

/** A request inside `d` (BYE, re-INVITE, INFO, ACK, ...). ACK reuses the CSeq number of its INVITE. */
export function buildInDialogRequest(tpl: AppRequestTemplate, d: Dialog, userAgent?: string): SipRequest {
  const method = tpl.method;
  // ACK and PRACK always go to the remote target (drachtio: nta_outgoing_prack on the dialog's leg)
  const useTarget = method === 'ACK' || method === 'PRACK' || tpl.uri.includes('placeholder');
  const uri = useTarget ? d.remoteTarget : tpl.uri;
  let seq: number;
  if (method === 'ACK') seq = d.ackable?.seq ?? d.localSeq;
  else seq = ++d.localSeq;
  const h = new Headers();
  h.append('From', d.localParty);
  h.append('To', d.remoteParty);
  h.append('Call-ID', d.callId);
  h.append('CSeq', `${seq} ${method}`);
  h.append('Max-Forwards', tpl.headers.get('Max-Forwards') ?? '70');
  if (!tpl.headers.has('Route')) for (const r of d.routeSet) h.append('Route', r);
  // target refresh requests carry our Contact (RFC 3261 12.2.1.1; NOTIFY: RFC 6665 8.2.1)
  if ((method === 'INVITE' || method === 'SUBSCRIBE' || method === 'REFER' || method === 'NOTIFY') && !tpl.headers.has('Contact')) {
    h.append('Contact', d.localContact);
  }
  for (const [name, value] of tpl.headers) {
    const key = name.toLowerCase();
    if (DIALOG_OWNED.has(key) || key === 'max-forwards') continue;
    h.append(name, value);
  }
  if (userAgent && method !== 'ACK' && !h.has('User-Agent')) h.append('User-Agent', userAgent);
  contentType(h, tpl.body);
  return new SipRequest(method, uri, h, tpl.body);
}

export interface ResponseContext {
  /** the To tag to use when the request had none (ignored for 100) */
  toTag?: string;
  /** our Contact, added to INVITE/SUBSCRIBE responses that create or refresh a dialog */
  contact: string;
  /** copy Record-Route (responses that can establish a dialog) */
  copyRecordRoute: boolean;
  userAgent?: string;
}

/** The response an application asked for, to `req`. */
export function buildResponse(req: SipRequest, tpl: AppResponseTemplate, ctx: ResponseContext): SipResponse {
  const res = req.makeResponse(tpl.status, tpl.reason || undefined, {
    toTag: ctx.toTag,
    copyRecordRoute: ctx.copyRecordRoute,
  });
  const h = res.headers;
  const dialogForming = (req.method === 'INVITE' || req.method === 'SUBSCRIBE') && tpl.status > 100 && tpl.status < 300;
  for (const [name, value] of tpl.headers) {
    if (RESPONSE_OWNED.has(name.toLowerCase())) continue;
    h.append(name, value);
  }
  if (dialogForming && !h.has('Contact')) h.append('Contact', ctx.contact);
  if (ctx.userAgent && !h.has('Server') && !h.has('User-Agent')) h.append('User-Agent', ctx.userAgent);
  contentType(h, tpl.body);
  res.bodyText = tpl.body;
  return res;
}

/** The To tag an application chose (drachtio lets `To: ...;tag=x` on a response set the local tag). */
export function appChosenTag(tpl: AppResponseTemplate): string | undefined {
  const to = tpl.headers.get('To');
  if (!to) return undefined;
  const m = /;\s*tag=([^;>\s]+)/i.exec(to);
  return m?.[1];
}
