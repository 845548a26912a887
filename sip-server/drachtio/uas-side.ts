/**
 * Requests from the network and the application's responses to them: new requests routed to an
 * application, in-dialog requests routed to the dialog's owner, CANCEL and ACK passed on, and the
 * responses an application sends back (`sip|<txnId>|` + status line) completed and sent.
 */
import { randomUUID } from 'node:crypto';
import { Headers, SipRequest, randomToken } from '../message';
import type { AppConnection } from './app-connection';
import { parseAppMessage, type AppResponseTemplate } from './app-message';
import { EngineContext, live, receivedMeta, sentMeta } from './context';
import { Dialog, dialogIdOf } from './dialogs';
import { appChosenTag, buildInDialogRequest, buildResponse, BuildError, contactFor } from './message-builder';
import { responseNo, responseSentEcho, sipToClient } from './protocol';
import { names100rel, ReliableProvisionals } from './reliable';
import { capabilities, withCapabilities, type Capabilities } from './capabilities';
import { cancelOneShot, oneShot, type OneShot } from '../transaction/context';
import type { Endpoint, InboundTransaction } from './sip-port';
import { dialogTraceOf, endSipSpan, traceInDialogRequest, traceNewRequest } from './trace';
import type { Span } from '../../core/tracing';

/** A request from the network waiting for its application's answer. */
interface PendingInbound {
  txnId: string;
  tx: InboundTransaction;
  /** tx's request: a transaction that has answered and settled no longer holds it */
  req: SipRequest;
  conn: AppConnection;
  /** our To tag (new INVITE/SUBSCRIBE: chosen once, used by every response) */
  toTag?: string;
  /** set for requests inside a dialog */
  dialog?: Dialog;
  /** INVITE: the early dialog our first 1xx created (confirmed by the 2xx) */
  early?: Dialog;
  /** INVITE: reliable provisional responses (RFC 3262), once the application sent one */
  rel?: ReliableProvisionals;
  /** forgets it if the application never answers (64 s by default: a coarse timer) */
  timer?: OneShot;
  /** the server transaction's span (trace.ts: a new INVITE or REGISTER, a request in a traced dialog), ended with its final response */
  span?: Span;
}

/** Methods that can never start a dialog or a transaction outside one: no dialog means 481. */
const NEEDS_DIALOG = new Set(['BYE', 'UPDATE', 'PRACK', 'CANCEL']);

export class UasSide {
  private readonly pending = new Map<string, PendingInbound>();
  /** early or confirmed UAS dialogs whose INVITE sent reliable provisionals: where a PRACK is matched */
  private readonly reliableOf = new WeakMap<Dialog, ReliableProvisionals>();

  /** Allow/Accept/Supported for OPTIONS answers, from the routes applications hold now */
  private readonly capabilities = (): Capabilities => capabilities(this.ctx.server.registry.routedMethods());

  constructor(
    private readonly ctx: EngineContext,
    private readonly selectApp: (method: string, tx: InboundTransaction) => Promise<AppConnection | undefined>,
  ) {}

  get pendingCount(): number {
    return this.pending.size;
  }

  /** A request from the network that no transaction absorbed. */
  onRequest(tx: InboundTransaction): void {
    const req = tx.request;
    let toTag: string | undefined;
    try {
      toTag = req.toTag;
    } catch {
      toTag = undefined;
    }
    if (req.method === 'ACK') return this.onAck(req);
    if (toTag) return this.inDialog(tx, toTag);
    if (NEEDS_DIALOG.has(req.method)) {
      tx.respond(req.makeResponse(481));
      return;
    }
    this.newRequest(tx).catch((err: Error) => {
      this.ctx.log.error({ err: err.message, method: req.method }, 'failed handling new request');
      tx.respond(req.makeResponse(500));
    });
  }

  /** ACK for a 2xx (from the server transaction, or a late one the stack passed up on its own). */
  onAck(ack: SipRequest, d?: Dialog): void {
    let dialog = d;
    if (!dialog) {
      try {
        dialog = this.ctx.dialogs.match(ack.callId, ack.toTag);
      } catch {
        return;
      }
    }
    if (!dialog) return;
    dialog.awaitingAck = undefined;
    const owner = live(dialog.owner);
    if (!owner) return;
    const from = endpointOf(ack);
    const { raw, meta } = receivedMeta(ack, from);
    owner.send(sipToClient(meta, randomUUID(), dialog.id, raw));
  }

  private async newRequest(tx: InboundTransaction): Promise<void> {
    const req = tx.request;
    const autoUa = this.ctx.opts.optionsAutoRespondUserAgent;
    if (autoUa && req.method === 'OPTIONS' && req.headers.get('User-Agent') === autoUa) {
      const res = req.makeResponse(200);
      withCapabilities(req, res, this.capabilities);
      tx.respond(res);
      return;
    }
    // the stack sends 100 Trying to an INVITE not answered within 200 ms
    if (req.method === 'INVITE') this.ctx.cdr('attempt', 'network', undefined, req);
    const span = traceNewRequest(req, tx.destination.transport);
    const conn = await this.selectApp(req.method, tx);
    if (!conn) {
      this.ctx.log.info({ method: req.method, callId: req.callId }, 'no application for request: 503');
      tx.respond(req.makeResponse(503));
      if (span) endSipSpan(span, 503, 'no application');
      if (req.method === 'INVITE') this.ctx.cdr('stop', 'application', 'call-rejected', req);
      return;
    }
    const txnId = randomUUID();
    const p: PendingInbound = { txnId, tx, req, conn, span };
    if (req.method === 'INVITE' || req.method === 'SUBSCRIBE') p.toTag = randomToken();
    this.track(p);
    tx.on('cancelled', (cancel: SipRequest) => {
      if (!this.pending.has(txnId)) return;
      this.forget(p, 'cancelled');
      p.rel?.finish();
      const { raw, meta } = receivedMeta(cancel, endpointOf(cancel));
      if (live(conn)) conn.send(sipToClient(meta, txnId, '', raw));
      this.ctx.cdr('stop', 'network', 'call-canceled', cancel);
    });
    const { raw, meta } = receivedMeta(req, endpointOf(req));
    const local = localOf(req);
    conn.send(sipToClient(meta, txnId, '', raw, local && { address: local.address, port: local.port }));
  }

  private inDialog(tx: InboundTransaction, toTag: string): void {
    const req = tx.request;
    const d = this.ctx.dialogs.match(req.callId, toTag);
    if (!d) {
      tx.respond(req.makeResponse(481));
      return;
    }
    const seq = req.cseq.seq;
    if (d.remoteSeq && seq < d.remoteSeq && req.method !== 'CANCEL') {
      tx.respond(req.makeResponse(500, 'Server Internal Error - CSeq out of order'));
      return;
    }
    if (req.method === 'PRACK' && !this.reliableOf.get(d)?.prack(req.headers.get('RAck'))) {
      // matches no unacknowledged reliable provisional response (RFC 3262 section 3)
      tx.respond(req.makeResponse(481));
      return;
    }
    d.remoteSeq = Math.max(d.remoteSeq, seq);
    const owner = live(d.owner);
    if (req.method === 'BYE') this.ctx.cdr('stop', 'network', 'normal-release', req);
    if (!owner) {
      if (req.method === 'BYE') this.ctx.dialogs.remove(d);
      tx.respond(req.makeResponse(481));
      return;
    }
    if (req.method === 'INVITE') {
      // a target refresh (RFC 3261 12.2.2)
      const c = req.contacts[0];
      if (c) d.remoteTarget = c.uri.toString();
    }
    const txnId = randomUUID();
    const span = traceInDialogRequest(req, tx.destination.transport, d.trace);
    this.track({ txnId, tx, req, conn: owner, dialog: d, span });
    if (req.method === 'BYE') this.ctx.dialogs.remove(d); // drachtio ends the dialog on receipt of BYE
    const { raw, meta } = receivedMeta(req, endpointOf(req));
    owner.send(sipToClient(meta, txnId, d.id, raw));
  }

  /** `sip|<txnId>|...` carrying a response from an application. */
  respond(conn: AppConnection, msgId: string, txnId: string, text: string): void {
    const p = this.pending.get(txnId);
    let tpl: AppResponseTemplate;
    try {
      const parsed = parseAppMessage(text);
      if (parsed.kind !== 'response') throw new BuildError('not a response');
      tpl = parsed;
    } catch (err) {
      conn.send(responseNo(msgId, `invalid response: ${(err as Error).message}`));
      return;
    }
    if (!p) {
      const cancel = /^\s*\d+\s+CANCEL\s*$/i.test(tpl.headers.get('CSeq') ?? '');
      conn.send(responseNo(msgId, cancel ? '200 OK to incoming CANCEL is automatically generated by the stack' : 'Response not sent due to unknown transaction'));
      return;
    }
    const req = p.req;
    const isInvite = req.method === 'INVITE';
    const formsDialog = isInvite || req.method === 'SUBSCRIBE';
    if (!p.dialog && p.toTag && tpl.status > 100) {
      // drachtio lets the application choose the local tag on its first response
      const chosen = appChosenTag(tpl);
      if (chosen && !req.headers.get('To')?.includes('tag=')) p.toTag = chosen;
    }
    const local = this.ctx.port.localFor(p.tx.destination.transport) ?? localOf(req);
    let res;
    try {
      res = buildResponse(req, tpl, {
        toTag: p.toTag,
        contact: contactFor(local ?? p.tx.destination),
        copyRecordRoute: formsDialog && !p.dialog,
        userAgent: this.ctx.opts.userAgent,
      });
    } catch (err) {
      conn.send(responseNo(msgId, (err as Error).message));
      return;
    }
    withCapabilities(req, res, this.capabilities);
    const reliable = isInvite && !p.dialog && tpl.status > 100 && tpl.status < 200 && names100rel(res.headers.getAll('Require'));
    if (reliable && !names100rel([...req.headers.getAll('Supported'), ...req.headers.getAll('Require')])) {
      conn.send(responseNo(msgId, 'Remote endpoint does not support 100rel'));
      return;
    }
    if (reliable) p.rel ??= this.reliable(p);
    let sent: boolean;
    if (reliable) sent = p.rel!.send(res);
    else if (p.rel && tpl.status >= 200) sent = p.rel.sendFinal(res);
    else sent = p.tx.respond(res);
    if (!sent) {
      conn.send(responseNo(msgId, 'Response not sent due to unknown transaction'));
      if (tpl.status >= 200) this.forget(p);
      return;
    }
    let dialogId = p.dialog?.id ?? '';
    if (!p.dialog && formsDialog) dialogId = dialogIdOf(req.callId, req.fromTag ?? '');
    if (isInvite && !p.dialog && !p.early && tpl.status > 100 && tpl.status < 200) {
      p.early = this.createUasDialog(p, req, res.headers.get('To') ?? '', res.headers.get('Contact') ?? '', true);
    }
    if (p.rel && p.early) this.reliableOf.set(p.early, p.rel);
    if (formsDialog && tpl.status >= 200 && tpl.status < 300) {
      if (p.dialog) {
        if (isInvite) this.expectAck(p.tx, p.dialog);
      } else if (p.early) {
        this.confirm(p.early, p.tx, res.headers.get('Contact') ?? '');
      } else this.createUasDialog(p, req, res.headers.get('To') ?? '', res.headers.get('Contact') ?? '');
    }
    // a final NOTIFY (Subscription-State: terminated) ends a subscription dialog (RFC 6665 4.4.1)
    if (p.dialog?.formedBy === 'SUBSCRIBE' && req.method === 'NOTIFY' && tpl.status >= 200 && /terminated/i.test(req.headers.get('Subscription-State') ?? '')) {
      this.ctx.dialogs.remove(p.dialog);
    }
    if (tpl.status >= 200) this.forget(p, tpl.status);
    if (isInvite && !p.dialog) {
      if (tpl.status >= 300) this.ctx.cdr('stop', 'application', 'call-rejected', res);
      else if (tpl.status >= 200) this.ctx.cdr('start', 'application', 'uas', res);
    }
    const { raw, meta } = sentMeta(res, p.tx.destination);
    conn.send(responseSentEcho(msgId, meta, txnId, dialogId, raw));
  }

  /** The INVITE's reliable provisionals; on PRACK timeout the call attempt ends (503 already sent). */
  private reliable(p: PendingInbound): ReliableProvisionals {
    const req = p.req;
    const rel = new ReliableProvisionals(p.tx, req, this.ctx.port.timers().t1, (held) => {
      this.ctx.log.warn({ callId: req.callId }, 'no PRACK for reliable provisional response: 503');
      this.forget(p, 503);
      const d = p.early;
      if (d && !d.ended) {
        this.ctx.dialogs.remove(d);
        // a 2xx was held for the PRACK: the application believes the call is up; end it as drachtio does on ACK timeout
        const owner = live(d.owner);
        if (held && owner) this.tellEnded(d, owner, 'PRACK timeout');
      }
      this.ctx.cdr('stop', 'network', 'call-rejected', req);
    });
    return rel;
  }

  private confirm(d: Dialog, tx: InboundTransaction, localContact: string): void {
    if (d.early) d.transition('Confirmed');
    if (localContact) d.localContact = localContact;
    if (d.role === 'uas') this.expectAck(tx, d);
  }

  /** `req`: p's request (a final response may have settled p.tx, which then no longer holds it) */
  private createUasDialog(p: PendingInbound, req: SipRequest, localParty: string, localContact: string, early = false): Dialog {
    const d = new Dialog(
      'uas',
      req.callId,
      p.toTag ?? '',
      req.fromTag ?? '',
      localParty,
      req.headers.get('From') ?? '',
      req.contacts[0]?.uri.toString() ?? req.uri,
      req.getAll('Record-Route'),
      localContact,
      p.tx.destination,
      1 + Math.floor(Math.random() * 9999),
      req.cseq.seq,
      p.conn,
      p.txnId,
      early ? 'Early' : 'Confirmed',
    );
    d.formedBy = req.method;
    d.trace = dialogTraceOf(p.span);
    this.ctx.dialogs.add(d);
    if (req.method === 'INVITE' && !early) this.expectAck(p.tx, d);
    return d;
  }

  private expectAck(tx: InboundTransaction, d: Dialog): void {
    d.awaitingAck = tx;
    // the transaction lives on for 32 s after the ACK (Timer L): once the ACK is in, neither listener
    // may keep the dialog alive with it
    const onTimeout = (): void => {
      tx.off('ack', onAckEvent);
      if (d.awaitingAck === tx && !d.ended) this.noAck(d);
    };
    const onAckEvent = (ack: SipRequest): void => {
      tx.off('timeout', onTimeout);
      this.onAck(ack, d);
    };
    tx.once('ack', onAckEvent);
    tx.once('timeout', onTimeout);
  }

  /**
   * No ACK for our 2xx (Timer L): as drachtio-server does, hang up towards the peer and tell the
   * owning application with an `unsolicited` BYE of source `application`.
   */
  private noAck(d: Dialog): void {
    this.ctx.log.warn({ dialog: d.id }, 'no ACK for 2xx: ending the dialog');
    const tpl = { kind: 'request' as const, method: 'BYE', uri: 'sip:placeholder', headers: new Headers(), body: '' };
    const bye = buildInDialogRequest(tpl, d, this.ctx.opts.userAgent);
    bye.headers.append('Reason', 'SIP ;cause=408 ;text="ACK timeout"');
    this.ctx.dialogs.remove(d);
    const tx = this.ctx.port.sendRequest(bye, d.routeSet.length ? undefined : d.remote);
    const owner = live(d.owner);
    if (!owner) return;
    const local = this.ctx.port.localFor(d.remote.transport) ?? d.remote;
    const { raw, meta } = sentMeta(tx.request, local);
    owner.send(sipToClient(meta, 'unsolicited', d.id, raw));
  }

  /** Tell the owner a dialog is over with an `unsolicited` BYE that never went on the wire. */
  private tellEnded(d: Dialog, owner: AppConnection, why: string): void {
    const tpl = { kind: 'request' as const, method: 'BYE', uri: 'sip:placeholder', headers: new Headers(), body: '' };
    const bye = buildInDialogRequest(tpl, d, this.ctx.opts.userAgent);
    bye.headers.append('Reason', `SIP ;cause=503 ;text="${why}"`);
    const local = this.ctx.port.localFor(d.remote.transport) ?? d.remote;
    const { raw, meta } = sentMeta(bye, local);
    owner.send(sipToClient(meta, 'unsolicited', d.id, raw));
  }

  private track(p: PendingInbound): void {
    this.pending.set(p.txnId, p);
    const ms = this.ctx.opts.appResponseTimeoutMs ?? 64_000;
    p.timer = oneShot(ms, () => this.forget(p));
  }

  /** `end`: the final status sent, or why the transaction ends without one (for its span) */
  private forget(p: PendingInbound, end: number | string = 'not answered'): void {
    if (p.timer) cancelOneShot(p.timer);
    this.pending.delete(p.txnId);
    if (p.span) endSipSpan(p.span, typeof end === 'number' ? end : undefined, typeof end === 'string' ? end : undefined);
    p.span = undefined;
    // an early dialog ends with its INVITE unless a 2xx confirmed it
    if (p.early?.early && !p.early.ended) this.ctx.dialogs.remove(p.early);
  }

  /** `proxy|<txnId>|...`: the application hands the request over to the proxy; we stop tracking it. */
  takeForProxy(txnId: string): InboundTransaction | undefined {
    const p = this.pending.get(txnId);
    if (!p || p.dialog || p.tx.finalSent) return undefined;
    this.forget(p, 'proxied');
    return p.tx;
  }

  /** The application went away: answer what it left unanswered. */
  onDisconnect(conn: AppConnection): void {
    for (const p of [...this.pending.values()]) {
      if (p.conn !== conn) continue;
      const status = p.dialog ? 500 : 480;
      this.forget(p, status);
      p.rel?.finish();
      p.tx.respond(p.req.makeResponse(status, undefined, { toTag: p.toTag }));
    }
  }
}

export function endpointOf(msg: SipRequest | { source?: SipRequest['source'] }): Endpoint {
  const s = msg.source;
  return s ? { transport: s.transport, address: s.address, port: s.port } : { transport: 'udp', address: '', port: 0 };
}

function localOf(msg: SipRequest): Endpoint | undefined {
  const s = msg.source;
  return s ? { transport: s.transport, address: s.localAddress, port: s.localPort } : undefined;
}
