/**
 * Requests an application asks us to send (`sip|<txnId>|<dialogId>|[<routeUrl>]` + request line):
 * new requests outside a dialog, requests inside a dialog (BYE, re-INVITE, INFO, ACK ...), CANCEL
 * of an INVITE it sent; and the responses that come back, passed to the application with the
 * drachtio transaction id and dialog id. UAC dialogs are created on the 2xx to an INVITE.
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { Headers, SipResponse, SipUri, parseUri } from '../message';
import type { AppConnection } from './app-connection';
import { parseAppMessage, type AppRequestTemplate } from './app-message';
import { EngineContext, live, receivedMeta, sentMeta } from './context';
import { Dialog, dialogIdOf } from './dialogs';
import { BuildError, buildInDialogRequest, buildNewRequest } from './message-builder';
import { requestSentEcho, responseNo, sipToClient } from './protocol';
import type { Endpoint, OutboundTransaction } from './sip-port';
import { defaultPort, isWebSocket, transportOfUri as transportOf } from '../transport/resolve';
import { FlowFailedError } from '../transport/ws';
import { dialogTraceOf, dropTraceHeader, endSipSpan, traceAppInDialog, traceAppNewRequest } from './trace';
import type { Span } from '../../core/tracing';

interface AppTransaction {
  txnId: string;
  conn: AppConnection;
  tx: OutboundTransaction;
  method: string;
  /** dialog id reported with every response ('' for requests outside INVITE dialogs) */
  dialogId: string;
  /** the dialog the request was sent in */
  dialog?: Dialog;
  /** initial INVITE: the early dialog a reliable 1xx created (drachtio adds UAC dialogs on those) */
  early?: Dialog;
  /** initial INVITE: highest RSeq delivered, per To tag (RFC 3262 section 4) */
  rseqs?: Map<string, number>;
  /** the client transaction's span (trace.ts), ended with its final response */
  span?: Span;
  done: boolean;
}

export class UacSide {
  private readonly txns = new Map<string, AppTransaction>();

  constructor(private readonly ctx: EngineContext) {}

  get pendingCount(): number {
    return this.txns.size;
  }

  /** `sip|...` carrying a request. */
  request(conn: AppConnection, msgId: string, tokens: string[], text: string): void {
    const [, , txnId = '', dialogId = '', routeUrl = ''] = tokens;
    let tpl: AppRequestTemplate;
    try {
      const parsed = parseAppMessage(text);
      if (parsed.kind !== 'request') throw new BuildError('expected a request');
      tpl = parsed;
    } catch (err) {
      conn.send(responseNo(msgId, (err as Error).message));
      return;
    }
    try {
      if (dialogId) return this.inDialog(conn, msgId, tpl, dialogId);
      if (txnId && tpl.method === 'CANCEL') return this.cancel(conn, msgId, txnId, tpl);
      const callId = tpl.headers.get('Call-ID');
      const existing = callId ? this.ctx.dialogs.byCallId(callId) : undefined;
      if (existing && tpl.method !== 'INVITE' && tpl.method !== 'ACK') return this.inDialog(conn, msgId, tpl, existing.id);
      this.outOfDialog(conn, msgId, tpl, routeUrl);
    } catch (err) {
      conn.send(responseNo(msgId, err instanceof BuildError ? err.message : `Server error: ${(err as Error).message}`));
    }
  }

  private outOfDialog(conn: AppConnection, msgId: string, tpl: AppRequestTemplate, routeUrl: string): void {
    let proxy: SipUri | undefined;
    if (routeUrl) {
      const u = safeUri(/^sips?:/i.test(routeUrl) ? routeUrl : `sip:${routeUrl}`);
      if (!u) throw new BuildError(`invalid route url: ${routeUrl}`);
      proxy = u;
    }
    const ruri = safeUri(tpl.uri);
    if (!ruri) throw new BuildError(`invalid request-uri: ${tpl.uri}`);
    const next = proxy ?? ruri;
    const transport = transportOf(next);
    const local = this.ctx.port.localFor(transport);
    if (!local) throw new BuildError('requested protocol/transport not available');
    if (this.ctx.port.isLocal(next.hostname, next.port)) throw new BuildError('can not send request to myself');
    const traceparent = dropTraceHeader(tpl.headers);
    const req = buildNewRequest(tpl, { local, userAgent: this.ctx.opts.userAgent });
    const dest: Endpoint | undefined = proxy ? { transport, address: proxy.hostname, port: proxy.port ?? defaultPort(transport) } : undefined;
    const span = traceAppNewRequest(tpl.method, req.callId, transport, traceparent);
    const tx = this.ctx.port.sendRequest(req, dest);
    const txnId = randomUUID();
    const dialogId = tpl.method === 'INVITE' || tpl.method === 'SUBSCRIBE' ? dialogIdOf(req.callId, req.fromTag ?? '') : '';
    this.track({ txnId, conn, tx, method: tpl.method, dialogId, span, done: false });
    if (tpl.method === 'INVITE') this.ctx.cdr('attempt', 'application', undefined, tx.request);
    const { raw, meta } = sentMeta(tx.request, local);
    conn.send(requestSentEcho(msgId, meta, txnId, raw));
  }

  private inDialog(conn: AppConnection, msgId: string, tpl: AppRequestTemplate, dialogId: string): void {
    const d = this.ctx.dialogs.get(dialogId);
    if (!d) {
      throw new BuildError(tpl.method === 'ACK' ? 'ACK for non-success final response is automatically generated by server' : 'unable to find dialog for dialog id provided');
    }
    const local = this.ctx.port.localFor(d.remote.transport) ?? d.remote;
    dropTraceHeader(tpl.headers);
    if (tpl.method === 'ACK') {
      const ackable = d.ackable;
      if (!ackable) throw new BuildError('ACK for non-success responses is automatically generated by the stack');
      const ack = buildInDialogRequest(tpl, d);
      d.ackable = undefined;
      this.ctx.port.sendAck(ackable.tx, ack, this.destinationIn(d));
      const { raw, meta } = sentMeta(ack, local);
      conn.send(requestSentEcho(msgId, meta, randomUUID(), raw));
      return;
    }
    const req = buildInDialogRequest(tpl, d, this.ctx.opts.userAgent);
    const span = traceAppInDialog(tpl.method, req.callId, d.remote.transport, d.trace);
    const tx = this.ctx.port.sendRequest(req, this.destinationIn(d));
    const txnId = randomUUID();
    this.track({ txnId, conn, tx, method: tpl.method, dialogId: d.id, dialog: d, span, done: false });
    if (tpl.method === 'BYE') this.ctx.cdr('stop', 'application', 'normal-release', tx.request);
    const { raw, meta } = sentMeta(tx.request, local);
    conn.send(requestSentEcho(msgId, meta, txnId, raw));
  }

  private cancel(conn: AppConnection, msgId: string, txnId: string, tpl: AppRequestTemplate): void {
    const e = this.txns.get(txnId);
    if (!e || e.method !== 'INVITE' || e.done) throw new BuildError(`unable to cancel unknown transaction id: ${txnId}`);
    const reason = tpl.headers.get('Reason');
    const cancel = this.ctx.port.cancel(e.tx, reason);
    if (!cancel) throw new BuildError(`unable to cancel transaction id: ${txnId}: already cancelled or answered`);
    const local = this.ctx.port.localFor(e.tx.destination.transport) ?? e.tx.destination;
    const { raw, meta } = sentMeta(cancel, local);
    conn.send(requestSentEcho(msgId, meta, randomUUID(), raw));
  }

  /**
   * Where in-dialog requests (the ACK for a 2xx included) go: the first Route (the stack resolves it),
   * else the remote target, on the dialog's transport unless the target names another one
   * (`;transport=`, `sips:`). Over TCP/TLS the connection the dialog runs on is used while it is open
   * (RFC 3261 18, RFC 5923's aim), whatever address and port the Contact names: a phone registered
   * over TCP/TLS is often not reachable by a connection of ours (NAT, no listener, no certificate);
   * once that connection is gone, a new one goes to the Contact.
   */
  private destinationIn(d: Dialog): Endpoint | undefined {
    // a WebSocket peer is reached only over its flow (RFC 7118 §5), whatever its Contact says
    if (isWebSocket(d.remote.transport)) return d.remote;
    if (d.routeSet.length) return undefined;
    const u = safeUri(d.remoteTarget);
    if (!u) return d.remote;
    const transport = u.transportParam || u.scheme === 'sips' ? transportOf(u) : d.remote.transport;
    const numeric = isIP(u.hostname) !== 0;
    const port = u.port ?? defaultPort(transport);
    if (transport === d.remote.transport && (transport === 'tcp' || transport === 'tls')) {
      // a Contact naming a host name: the fallback is the connection's peer (no lookup for a flow)
      return numeric ? { transport, address: u.hostname, port, connectionId: d.remote.connectionId } : { ...d.remote };
    }
    return { transport, address: u.hostname, port };
  }

  private track(e: AppTransaction): void {
    this.txns.set(e.txnId, e);
    e.tx.on('provisional', (res: SipResponse) => this.onProvisional(e, res));
    e.tx.on('final', (res: SipResponse) => this.onFinal(e, res));
    e.tx.on('timeout', () => this.onFinal(e, e.tx.request.makeResponse(408), true));
    // a WebSocket flow that is gone fails at once with 430 Flow Failed (RFC 5626 §5.3)
    e.tx.on('transport-error', (err: Error) => this.onFinal(e, e.tx.request.makeResponse(err instanceof FlowFailedError ? 430 : 503), true));
  }

  /**
   * A reliable 1xx (RSeq) to an initial INVITE creates the early dialog the application's PRACK and
   * UPDATE are sent in. Retransmissions and out-of-order ones (RSeq not one higher than the last) are
   * not passed on: the application must PRACK each reliable response exactly once (RFC 3262 section 4).
   */
  private onProvisional(e: AppTransaction, res: SipResponse): void {
    const rseqText = res.headers.get('RSeq');
    let tag: string | undefined;
    try {
      tag = res.toTag;
    } catch {
      tag = undefined;
    }
    if (rseqText === undefined || e.method !== 'INVITE' || e.dialog || !tag || res.status === 100) return this.deliver(e, res);
    const rseq = Number(rseqText);
    if (!Number.isInteger(rseq) || rseq < 1) return; // unusable RSeq: cannot be PRACKed
    e.rseqs ??= new Map();
    const last = e.rseqs.get(tag);
    if (last !== undefined && rseq !== last + 1) return;
    e.rseqs.set(tag, rseq);
    if (!e.early) e.early = this.addDialog(e, res, true);
    this.deliver(e, res);
  }

  private onFinal(e: AppTransaction, res: SipResponse, local = false): void {
    if (e.done) return;
    e.done = true;
    this.txns.delete(e.txnId);
    const status = res.status;
    if (e.span) endSipSpan(e.span, status, undefined, local);
    if (e.early?.early && !(status >= 200 && status < 300)) this.ctx.dialogs.remove(e.early);
    if (e.method === 'SUBSCRIBE' && !e.dialog && status >= 200 && status < 300) this.established(e, res);
    if (e.method === 'INVITE') {
      if (status >= 200 && status < 300) this.established(e, res);
      if (!e.dialog) {
        if (status >= 300) this.ctx.cdr('stop', 'network', status === 487 ? 'call-canceled' : 'call-rejected', res);
        else this.ctx.cdr('start', 'network', 'uac', res);
      }
    }
    if (e.method === 'BYE' && e.dialog && status !== 401 && status !== 407) this.ctx.dialogs.remove(e.dialog);
    // a subscription dialog ends with our final NOTIFY (RFC 6665 4.4.1), and when the subscriber says it no
    // longer has it: 481 to a NOTIFY, or no answer at all (408, RFC 5057 5.1); the INVITE dialog a REFER's
    // implicit subscription lives in is not one of these
    if (
      e.method === 'NOTIFY' &&
      e.dialog?.formedBy === 'SUBSCRIBE' &&
      status >= 200 &&
      (status === 481 || status === 408 || /terminated/i.test(e.tx.request.headers.get('Subscription-State') ?? ''))
    ) {
      this.ctx.dialogs.remove(e.dialog);
    }
    this.deliver(e, res, local);
  }

  /** 2xx to an INVITE: create the UAC dialog (or, for a re-INVITE, arm the ACK). */
  private established(e: AppTransaction, res: SipResponse): void {
    const req = e.tx.request;
    const seq = req.cseq.seq;
    if (e.dialog) {
      e.dialog.ackable = { tx: e.tx, seq };
      const c = res.contacts[0];
      if (c) e.dialog.remoteTarget = c.uri.toString();
      return;
    }
    const early = e.early;
    if (early && !early.ended) {
      // early -> confirmed: remote tag, target and route set are taken from the 2xx (RFC 3261 13.2.2.4)
      if (early.early) early.transition('Confirmed');
      early.remoteTag = res.toTag ?? early.remoteTag;
      early.remoteParty = res.headers.get('To') ?? early.remoteParty;
      early.remoteTarget = res.contacts[0]?.uri.toString() ?? early.remoteTarget;
      early.routeSet = res.getAll('Record-Route').reverse();
      early.remote = flowOf(early.remote, res);
      if (e.method === 'INVITE') early.ackable = { tx: e.tx, seq };
      if (!live(e.conn) && e.method === 'INVITE') this.abandon(early);
      return;
    }
    const d = this.addDialog(e, res, false);
    if (e.method === 'INVITE') d.ackable = { tx: e.tx, seq };
    if (!live(e.conn) && e.method === 'INVITE') this.abandon(d);
  }

  private addDialog(e: AppTransaction, res: SipResponse, early: boolean): Dialog {
    const req = e.tx.request;
    const seq = req.cseq.seq;
    const d = new Dialog(
      'uac',
      req.callId,
      req.fromTag ?? '',
      res.toTag ?? '',
      req.headers.get('From') ?? '',
      res.headers.get('To') ?? '',
      res.contacts[0]?.uri.toString() ?? req.uri,
      res.getAll('Record-Route').reverse(),
      req.headers.get('Contact') ?? '',
      flowOf(e.tx.destination, res),
      seq,
      0,
      e.conn,
      e.txnId,
      early ? 'Early' : 'Confirmed',
    );
    d.formedBy = req.method;
    d.trace = dialogTraceOf(e.span);
    this.ctx.dialogs.add(d);
    return d;
  }

  /** Nobody will ever ACK or hang up this call: do both ourselves (`reason`: an RFC 3326 Reason value). */
  abandon(d: Dialog, reason?: string): void {
    const tpl = (method: string): AppRequestTemplate => ({ kind: 'request', method, uri: 'sip:placeholder', headers: new Headers(), body: '' });
    if (d.ackable) this.ctx.port.sendAck(d.ackable.tx, buildInDialogRequest(tpl('ACK'), d), this.destinationIn(d));
    d.ackable = undefined;
    const bye = buildInDialogRequest(tpl('BYE'), d, this.ctx.opts.userAgent);
    if (reason) bye.headers.append('Reason', reason);
    this.ctx.port.sendRequest(bye, this.destinationIn(d));
    this.ctx.cdr('stop', 'application', 'normal-release', bye);
    this.ctx.dialogs.remove(d);
  }

  /** The application went away: CANCEL the INVITEs it left unanswered (a late 2xx is ACKed and BYEd by abandon). */
  onDisconnect(conn: AppConnection, reason: string): void {
    for (const e of this.txns.values()) {
      if (e.conn !== conn || e.done || e.method !== 'INVITE' || e.dialog) continue;
      try {
        this.ctx.port.cancel(e.tx, reason);
      } catch {
        /* already final */
      }
    }
  }

  private deliver(e: AppTransaction, res: SipResponse, local = false): void {
    const conn = live(e.conn);
    if (!conn) return;
    const from: Endpoint = !local && res.source ? { transport: res.source.transport, address: res.source.address, port: res.source.port } : e.tx.destination;
    const { raw, meta } = receivedMeta(res, from);
    conn.send(sipToClient(meta, e.txnId, e.dialogId, raw));
  }
}

/**
 * The peer's endpoint with the connection a response came on: over TCP/TLS a response arrives on
 * the connection the request went out on (RFC 3261 18.2.2), which the dialog's requests then keep.
 */
function flowOf(dest: Endpoint, res: SipResponse): Endpoint {
  const src = res.source;
  if (!src?.connectionId || src.transport !== dest.transport) return dest;
  return { transport: dest.transport, address: src.address, port: src.port, connectionId: src.connectionId };
}

function safeUri(s: string): SipUri | undefined {
  try {
    const u = parseUri(s);
    return u instanceof SipUri ? u : undefined;
  } catch {
    return undefined;
  }
}
