// SipStack: the public facade of the SIP stack (transports + RFC 3261 transactions + security).
//
//   const stack = new SipStack(loadSipConfig());
//   stack.on('request', (req, srv) => srv.respond(req.makeResponse(200)));
//   await stack.start();
//   const tx = stack.request(invite);            // our Via is added; target = Route[0] (lr) or R-URI
//   tx.on('final', (res) => { if (res.status < 300) tx.ack(buildAck(res)); });
//
// What the stack does by itself: 100 Trying to an INVITE its TU has not answered within 200 ms
// (RFC 3261 17.2.1; still before the caller's first retransmission), 2xx retransmission until the ACK
// (UDP), ACK for non-2xx finals, 200 to CANCEL + 487 to the INVITE, 400 to malformed requests,
// 482 (merged requests, proxy loops), 483 (Max-Forwards 0), 503 over the transaction cap, scanner
// and flood drops, received/rport on the top Via of incoming requests.
import { EventEmitter } from 'node:events';
import pino, { Logger } from 'pino';
import type { SipConfig } from '../sip-config';
import { SipMessage, SipParseError, SipRequest, SipResponse, SourceInfo, TransportName, newBranch, parseMessage } from './message';
import { ListeningPoint, SipResolver, Target, TransportLayer, isWebSocket, parseTarget, resolveTarget, responseDestination, systemResolver, targetForRequest } from './transport';
import { FLOW_CLOSED_HEADER, FlowRegistrations } from './flows';
import type { Destination, TransactionContext } from './transaction/context';
import { ClientTransaction, NonInviteClientTransaction } from './transaction/client';
import { InviteClientTransaction } from './transaction/client-invite';
import { NonInviteServerTransaction, ServerTransaction } from './transaction/server';
import { InviteServerTransaction } from './transaction/server-invite';
import { TransactionTable, ackKey, clientKey, mergeKey, serverKey } from './transaction/layer';
import { ScannerDropLog, ScannerFilter } from './security/scanner';
import { SourceRateLimiter } from './security/rate-limit';
import { trustFromAnswer } from './security/trusted';
import { sipMetrics } from './metrics';
import { isProxyLoop, loopHash, safeCSeqMethod, stampVia } from './inbound';
import type { SipCaptureHook } from './capture/capture';
import type { RequestOptions, SipStackEvents, SipStackOptions } from './stack-api';

/** An INVITE the TU has not answered within this long gets 100 (Trying) (RFC 3261 17.2.1). */
export const TRYING_AFTER_MS = 200;

export * from './message';
export type { ListeningPoint, Target } from './transport';
export type { Destination, TimerValues } from './transaction/context';
export { ClientTransaction, ServerTransaction, InviteClientTransaction, InviteServerTransaction };
export type { ClientTransactionState, ClientTransactionEvents } from './transaction/client';
export type { ServerTransactionState, ServerTransactionEvents, RespondOptions } from './transaction/server';
export type { SipStackOptions, RequestOptions, SipStackEvents } from './stack-api';

export class SipStack extends EventEmitter<SipStackEvents> {
  readonly log: Logger;
  private readonly transports: TransportLayer;
  private readonly table = new TransactionTable();
  private readonly scanners: ScannerFilter;
  private readonly scannerLog: ScannerDropLog;
  private readonly limiter: SourceRateLimiter;
  private readonly ctx: TransactionContext;
  private readonly resolver: SipResolver;
  private readonly capture: SipCaptureHook | undefined;
  private readonly flows: FlowRegistrations;
  private started = false;

  constructor(
    readonly config: SipConfig,
    opts: SipStackOptions = {},
  ) {
    super();
    this.log = opts.logger ?? pino({ level: process.env.LOG_LEVEL ?? 'info', base: { component: 'sip-stack' } });
    // the allow-list is exempt from the per-address connection bound too (the limiter exists by the first connection)
    this.transports = new TransportLayer(config, (address) => this.limiter.isAllowlisted(address));
    this.flows = new FlowRegistrations(this.transports);
    this.transports.on('message', (d: Buffer, s: SourceInfo) => this.onMessage(d, s));
    this.transports.on('frame-error', (reason: string, s: SourceInfo) => {
      sipMetrics.parseErrors.inc({ transport: s.transport });
      this.log.debug({ src: s, reason }, 'stream framing error, connection closed');
    });
    this.transports.on('error', (e: Error) => {
      // an unhandled 'error' event would throw; without a listener it is logged instead
      if (this.listenerCount('error')) this.emit('error', e);
      else this.log.error({ err: e }, 'SIP transport error');
    });
    // a connection ended: a WebSocket's registrations end with it (flows.ts)
    this.transports.on('flow-closed', (s: SourceInfo) => {
      for (const req of this.flows.closed(s)) this.onRequest(req, s, null, true);
    });
    this.resolver = opts.resolver ?? systemResolver(config.dns.servers);
    this.capture = opts.capture;
    this.scanners = new ScannerFilter(config.security.uaBlocklist);
    this.scannerLog = new ScannerDropLog((fields, msg) => this.log.warn(fields, msg));
    this.limiter = new SourceRateLimiter({ ...config.security.rateLimit, allowlist: config.security.allowlist });
    this.limiter.onBan = (source, scope) => {
      sipMetrics.bans.inc();
      this.log.warn({ source, scope, seconds: config.security.rateLimit.banSeconds }, scope === 'port' ? 'source port banned for flooding' : 'source address banned for flooding');
    };
    this.ctx = {
      timers: config.timers,
      send: (msg, dest, data) => this.sendMessage(msg, dest, data),
      onRetransmit: (msg) => sipMetrics.retransmissions.inc({ kind: msg instanceof SipRequest ? 'request' : 'response' }),
      onIllegalTransition: (e) => this.log.error({ machine: e.machine, from: e.from, to: e.to, stack: e.stack }, 'illegal transaction state transition ignored'),
      onTerminated: ({ id, kind }) => {
        if (kind === 'server') this.table.servers.delete(id);
        else this.table.clients.delete(id);
        sipMetrics.transactions.dec({ kind });
      },
    };
  }

  /** Bind the configured transports. */
  async start(): Promise<void> {
    if (this.started) return;
    await this.transports.start();
    this.started = true;
    this.log.info({ listening: this.listening }, 'SIP stack listening');
  }

  /** Close sockets and terminate every transaction (no events are emitted for them). */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.table.clear();
    this.limiter.close();
    await this.transports.stop();
  }

  /** The addresses and transports actually bound (real ports when the config said 0). */
  get listening(): ListeningPoint[] {
    return this.transports.listening;
  }

  /** The listening point used for a transport (undefined when that transport is not enabled). */
  listeningPoint(transport: TransportName): ListeningPoint | undefined {
    return this.listening.find((l) => l.transport === transport);
  }

  /** A Contact/Record-Route URI for this stack, e.g. "sip:alice@192.0.2.1:5060;transport=tcp". */
  localUri(transport: TransportName = 'udp', user?: string): string {
    const lp = this.listeningPoint(transport) ?? this.listening[0];
    const t = lp.transport === 'udp' ? '' : `;transport=${lp.transport}`;
    return `${lp.transport === 'tls' ? 'sips' : 'sip'}:${user ? `${user}@` : ''}${lp.advertisedHost}:${lp.port}${t}`;
  }

  /**
   * Keep a TCP/TLS connection open however long it is idle (a dialog's flow), until `until` (epoch
   * ms) or unpinConnection with the same key; the idle sweep closes only what nothing pins.
   */
  pinConnection(connectionId: string, key: string, until?: number): void {
    this.transports.pin(connectionId, key, until);
  }

  unpinConnection(connectionId: string, key: string): void {
    this.transports.unpin(connectionId, key);
  }

  /** Open TCP, TLS and WebSocket connections. */
  get connectionCount(): number {
    return this.transports.connectionCount;
  }

  /** Numbers of transactions in flight. */
  get transactionCounts(): { server: number; client: number } {
    return { server: this.table.serverCount, client: this.table.clientCount };
  }

  /**
   * Send a request through a new client transaction. The stack prepends its Via (new branch,
   * rport) and adds Max-Forwards: 70 when absent. Events are emitted asynchronously, so listeners
   * attached right after this call see everything.
   */
  request(req: SipRequest, opts: RequestOptions = {}): ClientTransaction {
    const proxied = req.headers.has('Via');
    const branch = newBranch() + (proxied ? `.${loopHash(req)}` : '');
    let target: Target;
    try {
      target = opts.target ? parseTarget(opts.target) : targetForRequest(req);
    } catch (e) {
      target = { host: 'invalid.invalid' };
      const tx = new NonInviteClientTransaction(`${branch}|${req.method}`, req, this.ctx);
      setImmediate(() => tx.fail(e as Error));
      return tx;
    }
    const transport = this.pickTransport(target, req);
    this.addVia(req, transport, branch);
    if (!req.headers.has('Max-Forwards')) req.headers.set('Max-Forwards', '70');
    return this.startClient(req, branch, { ...target, transport });
  }

  private startClient(req: SipRequest, branch: string, target: Target & { transport: TransportName }): ClientTransaction {
    const id = `${branch}|${req.method}`;
    const tx: ClientTransaction =
      req.method === 'INVITE'
        ? new InviteClientTransaction(id, req, this.ctx, {
            // the CANCEL reuses the INVITE's Via and branch (RFC 3261 9.1) and goes where the INVITE went
            sendCancel: (cancel) => this.startClient(cancel, branch, target),
            // the TU names the dialog's flow (sip-server/drachtio/uac-side.ts); without one, over WebSocket
            // the 2xx's Contact names no reachable host: the ACK takes the INVITE's flow
            sendAck: (ack, to) => {
              const opts: RequestOptions = to ? { target: to } : isWebSocket(target.transport) ? { target } : {};
              this.sendStateless(ack, opts).catch((err: Error) => this.log.debug({ err: err.message }, 'ACK send failed'));
            },
          })
        : new NonInviteClientTransaction(id, req, this.ctx);
    this.table.clients.set(id, tx);
    sipMetrics.transactions.inc({ kind: 'client' });
    const callId = req.callId;
    tx.once('timeout', () => this.log.info({ callId, method: req.method, target }, 'client transaction timed out'));
    tx.once('transport-error', (err: Error) => this.log.info({ callId, method: req.method, target, err: err.message }, 'client transaction transport error'));
    resolveTarget(target, this.resolveOptions).then(
      (dest) => {
        // NAPTR may choose another transport than the one our Via was written for
        if (dest.transport !== target.transport && req.topVia?.branch === branch) this.addVia(req, dest.transport, branch, true);
        tx.begin(dest);
      },
      (err: Error) => tx.fail(err),
    );
    return tx;
  }

  /**
   * Send a request without a transaction (ACK for a 2xx, stateless forwarding). A Via with a new
   * branch is prepended unless the top Via is already ours (so re-sends keep their branch).
   * Resolves with the destination used.
   */
  async sendStateless(req: SipRequest, opts: RequestOptions = {}): Promise<Destination> {
    const target = opts.target ? parseTarget(opts.target) : targetForRequest(req);
    const transport = this.pickTransport(target, req);
    const top = req.topVia;
    const ours = top && this.listening.some((l) => l.advertisedHost === top.host && l.port === top.port && l.transport === transport);
    if (!ours) this.addVia(req, transport, newBranch());
    if (!req.headers.has('Max-Forwards')) req.headers.set('Max-Forwards', '70');
    const dest = await resolveTarget({ ...target, transport }, this.resolveOptions);
    await this.sendMessage(req, dest);
    return dest;
  }

  /**
   * Send a response without a transaction (e.g. a 2xx retransmitted by a TU, or a response
   * forwarded by a stateless proxy), routed by its top Via: received/rport, maddr, sent-by; over
   * TCP/TLS the connection to that address is reused when open.
   */
  async sendResponse(res: SipResponse, dest?: Destination): Promise<Destination> {
    const via = res.topVia;
    if (!dest) {
      if (!via) throw new Error('response has no Via');
      dest = responseDestination(via);
    }
    await this.sendMessage(res, dest);
    return dest;
  }

  // ---------------------------------------------------------------- internals

  private pickTransport(target: Target, req: SipRequest): TransportName {
    // No automatic UDP->TCP switch for large requests (RFC 3261 18.1.1): many UDP-only peers would
    // then be unreachable; UDP carries up to 64 KiB and the TU can ask for TCP with ;transport=tcp.
    void req;
    let t: TransportName = target.transport ?? 'udp';
    if (!this.listeningPoint(t) && t === 'udp' && this.listeningPoint('tcp')) t = 'tcp';
    return t;
  }

  private addVia(req: SipRequest, transport: TransportName, branch: string, replace = false): void {
    const lp = this.listeningPoint(transport) ?? this.listening[0];
    const host = lp?.advertisedHost ?? '127.0.0.1';
    const via = `SIP/2.0/${transport.toUpperCase()} ${host}:${lp?.port ?? 5060};branch=${branch};rport`;
    if (replace) req.headers.replaceFirst('Via', via);
    else req.headers.prepend('Via', via);
  }

  private get resolveOptions(): { resolver: SipResolver; usable: ('udp' | 'tcp' | 'tls')[] } {
    return { resolver: this.resolver, usable: this.listening.flatMap((l) => (isWebSocket(l.transport) ? [] : [l.transport])) };
  }

  /** `data`: the message's bytes when the caller has them already (a transaction keeps them). */
  private async sendMessage(msg: SipMessage, dest: Destination, data = msg.toBuffer()): Promise<void> {
    if (msg instanceof SipRequest) sipMetrics.requestsOut.inc({ method: msg.method });
    else {
      const r = msg as SipResponse;
      sipMetrics.responsesOut.inc({ method: safeCSeqMethod(r), code: String(r.status) });
    }
    if (this.log.isLevelEnabled('trace')) this.log.trace({ callId: msg.callId, dest, msg: data.toString() }, 'send');
    if (this.capture) {
      const lp = this.listeningPoint(dest.transport);
      this.capture.sent(msg, data, dest, { address: lp?.advertisedHost ?? '127.0.0.1', port: lp?.port ?? 0 });
    }
    await this.transports.send(data, dest);
  }

  private onMessage(data: Buffer, src: SourceInfo): void {
    if (this.limiter.isBanned(src.address, src.port)) {
      sipMetrics.dropped.inc({ reason: 'banned' });
      return;
    }
    let msg: SipRequest | SipResponse;
    try {
      msg = parseMessage(data, { ...this.config.limits, mode: src.transport === 'tcp' || src.transport === 'tls' ? 'stream' : 'datagram' });
    } catch (e) {
      this.onParseError(e as SipParseError, src, data);
      return;
    }
    msg.source = src;
    try {
      if (msg instanceof SipResponse) this.onResponse(msg, data);
      else this.onRequest(msg, src, data);
    } catch (e) {
      // a bug must not take the listener down; log and carry on
      this.log.error({ err: e, callId: msg.callId }, 'error handling SIP message');
    }
  }

  private onParseError(err: SipParseError, src: SourceInfo, data: Buffer): void {
    sipMetrics.parseErrors.inc({ transport: src.transport });
    if (this.limiter.take(src.address, src.port) !== 'allow') return;
    this.log.debug({ src, reason: err.message, bytes: data.length }, 'unparseable SIP message');
    if (!(err instanceof SipParseError) || !err.canRespond) return;
    const req = err.partial as SipRequest;
    try {
      stampVia(req, src);
      const reason = `${err.status === 505 ? 'Version Not Supported' : err.status === 513 ? 'Message Too Large' : 'Bad Request'} (${err.message.replace(/[\r\n]+/g, ' ').slice(0, 100)})`;
      const res = req.makeResponse(err.status, reason);
      this.sendMessage(res, responseDestination(req.topVia!, src)).catch(() => undefined);
    } catch {
      /* could not form a response after all: drop */
    }
  }

  private onResponse(res: SipResponse, data: Buffer): void {
    this.capture?.received(res, data, res.source!);
    sipMetrics.responsesIn.inc({ method: safeCSeqMethod(res), code: String(res.status) });
    const key = clientKey(res);
    const tx = key ? this.table.clients.get(key) : undefined;
    if (tx) tx.receiveResponse(res);
    else this.emit('response', res);
  }

  private respondStateless(req: SipRequest, status: number, reason?: string, extra: Record<string, string> = {}): void {
    const res = req.makeResponse(status, reason);
    for (const [k, v] of Object.entries(extra)) res.headers.set(k, v);
    this.sendMessage(res, responseDestination(req.topVia!, req.source)).catch(() => undefined);
  }

  /**
   * `data`: the bytes as received (null for `internal`: made by the stack itself, a closed flow's
   * un-REGISTER, not subject to limits and never on the wire).
   */
  private onRequest(req: SipRequest, src: SourceInfo, data: Buffer | null, internal = false): void {
    if (!internal) {
      stampVia(req, src);
      const verdict = this.limiter.take(src.address, src.port);
      if (verdict !== 'allow') {
        sipMetrics.dropped.inc({ reason: verdict === 'banned' ? 'banned' : 'throttled' });
        return;
      }
      const scanner = this.scanners.match(req);
      if (scanner) {
        sipMetrics.dropped.inc({ reason: 'scanner' });
        this.scannerLog.note(src.address, scanner);
        return;
      }
      if (req.headers.has(FLOW_CLOSED_HEADER)) req.headers.delete(FLOW_CLOSED_HEADER);
    }
    sipMetrics.requestsIn.inc({ method: req.method });
    // captured once past the flood and scanner checks, as it arrived (before our received/rport)
    if (data) this.capture?.received(req, data, src);
    if (this.log.isLevelEnabled('debug')) this.log.debug({ callId: req.callId, method: req.method, src: `${src.transport}:${src.address}:${src.port}` }, 'request');

    if (req.method === 'ACK') return this.onAck(req);
    const existing = this.table.servers.get(serverKey(req));
    if (existing) {
      existing.receiveRequest(req);
      return;
    }
    if (req.method === 'CANCEL') return this.onCancel(req);

    let toTag: string | undefined;
    try {
      toTag = req.toTag;
    } catch {
      /* validated by the parser */
    }
    const mf = req.maxForwards;
    if (mf === 0 && req.method !== 'OPTIONS') return this.reject(req, 483);
    if (isProxyLoop(req, this.listening)) return this.reject(req, 482);
    if (toTag === undefined) {
      const mk = mergeKey(req);
      const other = this.table.merged.get(mk);
      if (other && other !== serverKey(req) && this.table.servers.has(other)) return this.reject(req, 482, 'Loop Detected (merged request)');
    }
    // Over the cap, out-of-dialog requests get 503; in-dialog ones (BYE of live calls) still pass.
    if (this.table.serverCount >= this.config.limits.maxServerTransactions && toTag === undefined) {
      sipMetrics.overload.inc();
      this.respondStateless(req, 503, 'Service Unavailable', { 'Retry-After': String(5 + Math.floor(Math.random() * 10)) });
      return;
    }
    const srv = this.createServer(req);
    if (toTag === undefined) {
      const mk = mergeKey(req);
      this.table.merged.set(mk, srv.id);
      srv.once('terminated', () => {
        if (this.table.merged.get(mk) === srv.id) this.table.merged.delete(mk);
      });
    }
    if (srv instanceof InviteServerTransaction) srv.tryingAfter(TRYING_AFTER_MS);
    if (this.listenerCount('request') === 0) {
      srv.respond(req.makeResponse(503));
      return;
    }
    this.emit('request', req, srv);
  }

  private createServer(req: SipRequest): ServerTransaction {
    const id = serverKey(req);
    const dest = responseDestination(req.topVia!, req.source);
    let srv: ServerTransaction;
    if (req.method === 'INVITE') {
      const inv = new InviteServerTransaction(id, req, dest, this.ctx);
      this.trackAccepted(inv, ackKey(req));
      srv = inv;
    } else srv = new NonInviteServerTransaction(id, req, dest, this.ctx);
    // what the application accepted (a REGISTER's 2xx, an INVITE's 2xx) is never banned as a flooder
    if (req.method === 'REGISTER' || req.method === 'INVITE') this.trustOnAnswer(srv);
    this.table.servers.set(id, srv);
    sipMetrics.transactions.inc({ kind: 'server' });
    const { callId, method } = req;
    srv.once('timeout', () => this.log.info({ callId, method }, 'no ACK: server transaction timed out'));
    return srv;
  }

  // The listeners below each close over only what they use: a closure made in createServer would keep
  // its whole scope, the request included, for as long as the transaction lives (32 s after a 2xx).

  /** The accepted INVITE is where the ACK for its 2xx is routed (by ackKey) until it terminates. */
  private trackAccepted(inv: InviteServerTransaction, ak: string): void {
    inv.once('accepted', () => this.table.accepted.set(ak, inv));
    inv.once('terminated', () => {
      if (this.table.accepted.get(ak) === inv) this.table.accepted.delete(ak);
    });
  }

  private trustOnAnswer(srv: ServerTransaction): void {
    srv.once('final', (res: SipResponse) => {
      const req = srv.request; // 'final' is emitted before the transaction can settle
      const trust = trustFromAnswer(req, res);
      if (trust) this.limiter.trust(trust);
      if (req.method === 'REGISTER' && req.source?.connectionId) this.flows.note(req, res);
    });
  }

  /** Answer through a short-lived server transaction so retransmissions are absorbed. */
  private reject(req: SipRequest, status: number, reason?: string): void {
    const srv = this.createServer(req);
    srv.respond(req.makeResponse(status, reason));
  }

  private onAck(ack: SipRequest): void {
    const srv = this.table.servers.get(serverKey(ack));
    if (srv && srv.state !== 'Accepted') {
      srv.receiveRequest(ack);
      return;
    }
    const inv = this.table.accepted.get(ackKey(ack));
    if (inv) {
      const wasAcked = inv.ackReceived;
      inv.receiveAck2xx(ack);
      if (!wasAcked) this.emit('ack', ack, inv);
      return;
    }
    this.emit('ack', ack, undefined);
  }

  private onCancel(cancel: SipRequest): void {
    const inv = this.table.servers.get(serverKey(cancel, 'INVITE'));
    const srv = this.createServer(cancel);
    if (!(inv instanceof InviteServerTransaction)) {
      srv.respond(cancel.makeResponse(481));
      return;
    }
    // 200 for the CANCEL carries the INVITE's To tag when it already has one (RFC 3261 9.2)
    let toTag: string | undefined;
    try {
      toTag = inv.lastResponse?.toTag;
    } catch {
      /* none */
    }
    srv.respond(cancel.makeResponse(200, undefined, { toTag }));
    inv.receiveCancel(cancel);
    this.emit('cancel', cancel, inv);
  }
}
