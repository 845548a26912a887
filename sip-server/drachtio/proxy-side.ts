/**
 * Stateful proxy (RFC 3261 16) driven by `proxy|<txnId>|[remainInDialog]|[fullResponse]|
 * [followRedirects]|simultaneous|serial|<provisionalTimeout>|<finalTimeout>|<dest>...`.
 * Targets are tried one after another (serial) or all at once (simultaneous); provisionals are
 * relayed upstream, the first 2xx wins (other branches are cancelled), otherwise the best final
 * response goes upstream (RFC 3261 16.7). Each final response is reported to the application
 * (`...|continue`), then `OK|done`. A proxied INVITE dialog is remembered by Call-ID so that
 * in-dialog requests (with or without our Record-Route) and ACKs are relayed to the other party;
 * it is forgotten when its BYE is answered (or times out), when an in-dialog request gets 481 (the
 * dialog is gone, RFC 5057), or when no in-dialog request passed for `proxyDialogIdleMs` (a BYE
 * that went around us or was lost). While remembered, it holds both parties' TCP/TLS connections open.
 */
import { randomUUID } from 'node:crypto';
import { SipRequest, SipResponse, SipUri, parseUri } from '../message';
import type { AppConnection } from './app-connection';
import { parseAppMessage } from './app-message';
import { EngineContext, live, receivedMeta } from './context';
import { transportOfUri } from '../transport/resolve';
import { proxyResponseEcho, responseNo, responseOk, type ClientMessage } from './protocol';
import type { Endpoint, InboundTransaction, OutboundTransaction } from './sip-port';

interface Branch {
  target: string;
  tx?: OutboundTransaction;
  final?: SipResponse;
  provisional: boolean;
  timer?: NodeJS.Timeout;
}

interface ProxyJob {
  id: string;
  conn: AppConnection;
  msgId: string;
  upstream: InboundTransaction;
  /** the upstream request's Vias: a 2xx retransmitted downstream is relayed after the upstream ACK, when its transaction has released the request */
  upstreamVias: string[];
  recordRoute: boolean;
  followRedirects: boolean;
  simultaneous: boolean;
  provisionalMs?: number;
  finalMs?: number;
  queue: string[];
  branches: Branch[];
  extraHeaders: [string, string][];
  done: boolean;
  cancelled: boolean;
}

/** A dialog we proxied: in-dialog requests from one party go to the other. */
interface ProxiedDialog {
  callerTag: string;
  caller: Endpoint;
  callerTarget: string;
  callee?: Endpoint;
  calleeTarget?: string;
  /** forgets the dialog when no in-dialog request passed for proxyDialogIdleMs; re-armed by each */
  idle: NodeJS.Timeout;
  /** the parties' connections it holds open (key, connection ids) */
  pin: { key: string; connectionIds: string[] };
}

/** How long a proxied dialog is remembered with no in-dialog request passing (SIP_PROXY_DIALOG_IDLE_MS's default). */
export const PROXY_DIALOG_IDLE_MS = 12 * 3600_000;

export function parseDuration(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const m = /^(\d+)(ms|s)?$/.exec(s.trim());
  if (!m) return undefined;
  return m[2] === 'ms' ? Number(m[1]) : Number(m[1]) * 1000;
}

export class ProxySide {
  private readonly jobs = new Set<ProxyJob>();
  private readonly dialogs = new Map<string, ProxiedDialog>();
  private pinSeq = 0;

  constructor(private readonly ctx: EngineContext) {}

  get activeCount(): number {
    return this.jobs.size + this.dialogs.size;
  }

  start(conn: AppConnection, msg: ClientMessage, upstream: InboundTransaction): void {
    const t = msg.tokens;
    const req = upstream.request;
    const maxForwards = req.maxForwards;
    if (maxForwards !== undefined && maxForwards <= 0) {
      upstream.respond(req.makeResponse(483));
      conn.send(responseNo(msg.id, 'Rejected with 483 Too Many Hops due to Max-Forwards value of 0'));
      return;
    }
    const extraHeaders: [string, string][] = [];
    if (msg.sip) {
      try {
        for (const h of parseAppMessage(msg.sip).headers) extraHeaders.push(h);
      } catch {
        /* the request line is all srf sends when there are no headers */
      }
    }
    const job: ProxyJob = {
      id: randomUUID(),
      conn,
      msgId: msg.id,
      upstream,
      upstreamVias: req.getAll('Via'),
      recordRoute: t[3] === 'remainInDialog',
      followRedirects: t[5] === 'followRedirects',
      simultaneous: t[6] === 'simultaneous',
      provisionalMs: parseDuration(t[7]),
      finalMs: parseDuration(t[8]),
      queue: t.slice(9).filter((d) => d.length > 0),
      branches: [],
      extraHeaders,
      done: false,
      cancelled: false,
    };
    if (job.queue.length === 0) {
      upstream.respond(req.makeResponse(500));
      conn.send(responseNo(msg.id, 'Invalid proxy request: no destination'));
      return;
    }
    this.jobs.add(job);
    upstream.once('cancelled', () => {
      job.cancelled = true;
      for (const b of job.branches) this.cancelBranch(b);
      this.finish(job, undefined);
    });
    if (req.method === 'INVITE') {
      upstream.on('ack', (ack: SipRequest) => this.relayAck(ack));
    }
    this.next(job);
  }

  /** Launch the next target(s). */
  private next(job: ProxyJob): void {
    while (job.queue.length && !job.done && !job.cancelled) {
      const target = job.queue.shift() as string;
      const branch: Branch = { target, provisional: false };
      job.branches.push(branch);
      if (!this.launch(job, branch)) continue;
      if (!job.simultaneous) return;
    }
    if (!job.done && job.branches.every((b) => b.final)) this.finish(job, this.best(job));
  }

  private launch(job: ProxyJob, b: Branch): boolean {
    const req = job.upstream.request.clone();
    let uri: SipUri;
    try {
      const u = parseUri(/^sips?:|^tel:/i.test(b.target) ? b.target : `sip:${b.target}`);
      if (!(u instanceof SipUri)) throw new Error('not sip');
      uri = u;
    } catch {
      b.final = req.makeResponse(400, 'Bad Proxy Target');
      return false;
    }
    req.uri = uri.toString();
    req.headers.delete('Via'); // the stack puts ours on top; the upstream ones are kept below
    for (const v of job.upstreamVias) req.headers.append('Via', v);
    const mf = job.upstream.request.maxForwards;
    req.headers.set('Max-Forwards', String(mf === undefined ? 70 : mf - 1));
    this.popOwnRoute(req);
    const transport = transportOfUri(uri);
    const local = this.ctx.port.localFor(transport) ?? this.ctx.port.localFor('udp');
    if (job.recordRoute && local) {
      const tp = local.transport === 'udp' ? '' : `;transport=${local.transport}`;
      const me = `<sip:${local.address}:${local.port}${tp};lr>`;
      // a proxied REGISTER gets a Path (RFC 3327) where an INVITE/SUBSCRIBE gets a Record-Route
      if (req.method === 'REGISTER') req.headers.prepend('Path', me);
      else if (req.method === 'INVITE' || req.method === 'SUBSCRIBE') req.headers.prepend('Record-Route', me);
    }
    for (const [n, v] of job.extraHeaders) req.headers.set(n, v);
    let tx: OutboundTransaction;
    try {
      tx = this.ctx.port.sendRequest(req);
    } catch (err) {
      b.final = req.makeResponse(503, `Service Unavailable (${(err as Error).message})`);
      return false;
    }
    b.tx = tx;
    if (job.provisionalMs) {
      b.timer = setTimeout(() => {
        if (!b.provisional) this.timeoutBranch(job, b);
      }, job.provisionalMs);
    } else if (job.finalMs) {
      b.timer = setTimeout(() => this.timeoutBranch(job, b), job.finalMs);
    }
    tx.on('provisional', (res: SipResponse) => this.onProvisional(job, b, res));
    tx.on('final', (res: SipResponse) => this.onFinal(job, b, res));
    tx.on('additional-2xx', (res: SipResponse) => this.relayUp(job, res));
    tx.on('timeout', () => this.onFinal(job, b, tx.request.makeResponse(408), true));
    tx.on('transport-error', () => this.onFinal(job, b, tx.request.makeResponse(503), true));
    return true;
  }

  private timeoutBranch(job: ProxyJob, b: Branch): void {
    if (b.final || job.done) return;
    this.cancelBranch(b);
    b.final = b.tx?.request.makeResponse(408) ?? job.upstream.request.makeResponse(408);
    this.next(job);
  }

  private cancelBranch(b: Branch): void {
    clearTimeout(b.timer);
    if (b.tx && !b.final && b.tx.request.method === 'INVITE') this.ctx.port.cancel(b.tx);
  }

  private onProvisional(job: ProxyJob, b: Branch, res: SipResponse): void {
    b.provisional = true;
    if (job.provisionalMs && b.timer) {
      clearTimeout(b.timer);
      b.timer = job.finalMs ? setTimeout(() => this.timeoutBranch(job, b), job.finalMs) : undefined;
    }
    if (res.status > 100 && !job.done) this.relayUp(job, res);
  }

  private onFinal(job: ProxyJob, b: Branch, res: SipResponse, local = false): void {
    if (b.final) return;
    clearTimeout(b.timer);
    b.final = res;
    this.report(job, res, local ? b.tx?.destination : undefined);
    if (job.done) return;
    const s = res.status;
    if (s >= 200 && s < 300) {
      for (const other of job.branches) if (other !== b) this.cancelBranch(other);
      this.remember(job, b, res);
      this.finish(job, res);
      return;
    }
    if (s >= 600) {
      for (const other of job.branches) if (other !== b) this.cancelBranch(other);
      this.finish(job, res);
      return;
    }
    if (s >= 300 && s < 400 && job.followRedirects) {
      for (const c of res.contacts) job.queue.push(c.uri.toString());
    }
    if (job.cancelled) return;
    this.next(job);
  }

  /** RFC 3261 16.7 step 6: 6xx first, then the lowest class, 408 when nothing came back. */
  private best(job: ProxyJob): SipResponse {
    const finals = job.branches.map((b) => b.final).filter((r): r is SipResponse => !!r);
    const six = finals.find((r) => r.status >= 600);
    if (six) return six;
    const sorted = finals.filter((r) => r.status >= 300).sort((a, b) => Math.floor(a.status / 100) - Math.floor(b.status / 100));
    return sorted[0] ?? job.upstream.request.makeResponse(408);
  }

  private finish(job: ProxyJob, res: SipResponse | undefined): void {
    if (job.done) return;
    job.done = true;
    this.jobs.delete(job);
    for (const b of job.branches) clearTimeout(b.timer);
    if (res && !job.cancelled) this.relayUp(job, res);
    if (live(job.conn)) job.conn.send(responseOk(job.msgId, 'done'));
  }

  /** Forward a response upstream without our Via (RFC 3261 16.7 step 3). */
  private relayUp(job: ProxyJob, res: SipResponse): void {
    const fwd = res.clone();
    fwd.headers.delete('Via');
    for (const v of job.upstreamVias) fwd.headers.append('Via', v);
    job.upstream.respond(fwd, { retransmit2xx: false });
  }

  private report(job: ProxyJob, res: SipResponse, from?: Endpoint): void {
    if (!live(job.conn)) return;
    const src = from ?? (res.source ? { transport: res.source.transport, address: res.source.address, port: res.source.port } : undefined);
    const { raw, meta } = receivedMeta(res, src ?? { transport: 'udp', address: '', port: 0 });
    job.conn.send(proxyResponseEcho(job.msgId, meta, raw));
  }

  private remember(job: ProxyJob, b: Branch, res: SipResponse): void {
    const req = job.upstream.request;
    if (req.method !== 'INVITE' || !b.tx) return;
    const s = req.source;
    const callId = req.callId;
    this.forget(callId);
    const d: ProxiedDialog = {
      callerTag: req.fromTag ?? '',
      caller: s ? { transport: s.transport, address: s.address, port: s.port, connectionId: s.connectionId } : job.upstream.destination,
      callerTarget: req.contacts[0]?.uri.toString() ?? '',
      callee: b.tx.destination,
      calleeTarget: res.contacts[0]?.uri.toString(),
      // forget dialogs whose BYE we never see (it went around us, or was lost)
      idle: setTimeout(() => this.forget(callId), this.ctx.opts.proxyDialogIdleMs ?? PROXY_DIALOG_IDLE_MS),
      pin: { key: `proxied-${++this.pinSeq}`, connectionIds: [s?.connectionId, res.source?.connectionId].filter((c): c is string => !!c) },
    };
    d.idle.unref();
    for (const c of d.pin.connectionIds) this.ctx.port.pin(c, d.pin.key);
    this.dialogs.set(callId, d);
  }

  /** The proxied dialog ended (or was given up): its timer and its connections' pins go with it. */
  private forget(callId: string): void {
    const d = this.dialogs.get(callId);
    if (!d) return;
    this.dialogs.delete(callId);
    clearTimeout(d.idle);
    for (const c of d.pin.connectionIds) this.ctx.port.unpin(c, d.pin.key);
  }

  /** Forget every proxied dialog (the server is closing). */
  close(): void {
    for (const callId of [...this.dialogs.keys()]) this.forget(callId);
  }

  /** An in-dialog request of a proxied dialog: relay it statefully to the other party. */
  onRequest(tx: InboundTransaction): boolean {
    const req = tx.request;
    const d = this.dialogs.get(req.callId);
    if (!d) return false;
    if (req.method === 'ACK') {
      this.relayAck(req);
      return true;
    }
    d.idle.refresh();
    const fromCaller = req.fromTag === d.callerTag;
    const fwd = req.clone();
    const mf = req.maxForwards;
    fwd.headers.set('Max-Forwards', String(mf === undefined ? 70 : mf - 1));
    const popped = this.popOwnRoute(fwd);
    const target = fromCaller ? d.calleeTarget : d.callerTarget;
    if (this.isLocalUri(fwd.uri) && target) fwd.uri = target;
    const dest = popped && fwd.headers.has('Route') ? undefined : fromCaller ? d.callee : d.caller;
    const out = this.ctx.port.sendRequest(fwd, dest);
    const relay = (res: SipResponse) => {
      const up = res.clone();
      up.headers.delete('Via');
      for (const v of req.getAll('Via')) up.headers.append('Via', v);
      tx.respond(up, { retransmit2xx: false });
    };
    out.on('provisional', (res: SipResponse) => {
      if (res.status > 100) relay(res);
    });
    // the BYE's answer (or none) ends the dialog; so does a 481 to any request in it (RFC 5057 5.1)
    out.on('final', (res: SipResponse) => {
      relay(res);
      if (req.method === 'BYE' || res.status === 481) this.forget(req.callId);
    });
    out.on('timeout', () => {
      tx.respond(req.makeResponse(408));
      if (req.method === 'BYE') this.forget(req.callId);
    });
    out.on('transport-error', () => {
      tx.respond(req.makeResponse(503));
      if (req.method === 'BYE') this.forget(req.callId);
    });
    return true;
  }

  /** ACK for a proxied 2xx (end to end): forward it statelessly (RFC 3261 16.11 / 16.6). */
  relayAck(ack: SipRequest): boolean {
    const d = this.dialogs.get(ack.callId);
    if (!d) return false;
    d.idle.refresh();
    const fromCaller = ack.fromTag === d.callerTag;
    const fwd = ack.clone();
    const popped = this.popOwnRoute(fwd);
    const target = fromCaller ? d.calleeTarget : d.callerTarget;
    if (this.isLocalUri(fwd.uri) && target) fwd.uri = target;
    const dest = popped && fwd.headers.has('Route') ? undefined : fromCaller ? d.callee : d.caller;
    this.ctx.port.sendStateless(fwd, dest);
    return true;
  }

  /** Remove a top Route that designates us (loose routing, RFC 3261 16.4); true if one was removed. */
  private popOwnRoute(req: SipRequest): boolean {
    const top = req.headers.get('Route');
    if (!top) return false;
    const m = /<([^>]+)>/.exec(top);
    if (!m || !this.isLocalUri(m[1])) return false;
    req.headers.shift('Route');
    return true;
  }

  private isLocalUri(s: string): boolean {
    try {
      const u = parseUri(s);
      return u instanceof SipUri && this.ctx.port.isLocal(u.hostname, u.port);
    } catch {
      return false;
    }
  }
}
