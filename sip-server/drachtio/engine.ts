/**
 * The drachtio layer: joins the protocol server (application connections) to the SIP stack
 * (through a SipPort). It routes each `sip|` message to the UAS side (responses) or the UAC side
 * (requests), `proxy|` messages to the proxy, and each network request to an application.
 */
import type { SipMessage } from '../message';
import type { AppConnection } from './app-connection';
import { EngineContext, EngineOptions, silentLogger, type Logger } from './context';
import { DialogTable } from './dialogs';
import { OutboundConnector, type OutboundTarget } from './outbound';
import { cdrToClient, responseNo, type ClientMessage } from './protocol';
import { ProxySide } from './proxy-side';
import type { DrachtioHandler, DrachtioServer } from './server';
import type { InboundTransaction, SipPort } from './sip-port';
import { UacSide } from './uac-side';
import { UasSide } from './uas-side';

export interface DrachtioEngineOptions extends EngineOptions {
  /** srf.listen() applications we dial when no connected application routes a method */
  outboundTargets?: OutboundTarget[];
}

export class DrachtioEngine implements DrachtioHandler {
  readonly dialogs: DialogTable;
  readonly uas: UasSide;
  readonly uac: UacSide;
  readonly proxy: ProxySide;
  private readonly ctx: EngineContext;
  private readonly outbound?: OutboundConnector;
  private readonly log: Logger;

  constructor(
    readonly server: DrachtioServer,
    readonly port: SipPort,
    opts: DrachtioEngineOptions = {},
  ) {
    this.log = opts.logger ?? silentLogger;
    // each live dialog holds its TCP/TLS flow open (the idle sweep spares it, docs/sip-server.md)
    this.dialogs = new DialogTable((e) => this.log.error({ from: e.from, to: e.to, stack: e.stack }, 'illegal dialog state transition ignored'), port);
    this.ctx = {
      port,
      server,
      dialogs: this.dialogs,
      opts,
      log: this.log,
      cdr: (type, source, extra, msg) => this.cdr(type, source, extra, msg),
    };
    if (opts.outboundTargets?.length) this.outbound = new OutboundConnector(server, opts.outboundTargets, this.log);
    this.uas = new UasSide(this.ctx, (method, tx) => this.selectApp(method, tx));
    this.uac = new UacSide(this.ctx);
    this.proxy = new ProxySide(this.ctx);
    server.setHandler(this);
    port.on('request', (tx: InboundTransaction) => this.onNetworkRequest(tx));
    port.on('ack', (ack) => {
      if (!this.proxy.relayAck(ack)) this.uas.onAck(ack);
    });
  }

  private onNetworkRequest(tx: InboundTransaction): void {
    const req = tx.request; // a transaction that has answered may have released it by the catch
    try {
      if (this.proxy.onRequest(tx)) return;
      this.uas.onRequest(tx);
    } catch (err) {
      this.log.error({ err: (err as Error).message, method: req.method }, 'failed handling request');
      try {
        tx.respond(req.makeResponse(500));
      } catch {
        /* already answered */
      }
    }
  }

  private async selectApp(method: string, tx: InboundTransaction): Promise<AppConnection | undefined> {
    const conn = this.server.registry.select(method);
    if (conn || !this.outbound) return conn;
    return this.outbound.connectFor(tx.request);
  }

  onSip(conn: AppConnection, msg: ClientMessage): void {
    const text = msg.sip;
    try {
      if (text.startsWith('SIP/')) {
        const txnId = msg.tokens[2];
        if (!txnId) return void conn.send(responseNo(msg.id, 'transaction id missing'));
        this.uas.respond(conn, msg.id, txnId, text);
      } else {
        this.uac.request(conn, msg.id, msg.tokens, text);
      }
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'failed handling sip message from application');
      conn.send(responseNo(msg.id, `Server error: ${(err as Error).message}`));
    }
  }

  onProxy(conn: AppConnection, msg: ClientMessage): void {
    const tx = this.uas.takeForProxy(msg.tokens[2] ?? '');
    if (!tx) return void conn.send(responseNo(msg.id, 'unknown transaction id'));
    this.proxy.start(conn, msg, tx);
  }

  onDisconnect(conn: AppConnection): void {
    this.log.info({ app: conn.remote }, 'application disconnected');
    this.uas.onDisconnect(conn);
    if (!this.ctx.opts.keepOrphanedDialogs) this.endOrphans(conn);
  }

  /**
   * The calls of an application that went away (crash, kill -9, lost connection) have no media and
   * no one to end them: hang them up now rather than leave the far ends in silence (docs/reliability.md).
   */
  private endOrphans(conn: AppConnection): void {
    const reason = 'SIP ;cause=503 ;text="application disconnected"';
    this.uac.onDisconnect(conn, reason);
    let n = 0;
    for (const d of this.dialogs.ownedBy(conn)) {
      if (d.early) continue; // ended by the 480 / CANCEL above
      if (d.formedBy !== 'INVITE') {
        this.dialogs.remove(d);
        continue;
      }
      n++;
      // a UAS must not BYE before the ACK of its 2xx (RFC 3261 15); without an ACK, Timer L's noAck BYEs
      if (d.awaitingAck) d.awaitingAck.once('ack', () => !d.ended && this.uac.abandon(d, reason));
      else this.uac.abandon(d, reason);
    }
    if (n) this.log.warn({ app: conn.remote, dialogs: n }, 'application gone: its calls were hung up');
  }

  hostports(): { public: string[]; local: string[] } {
    const list = this.port.listeningPoints().map((l) => `${l.transport}/${l.address.includes(':') ? `[${l.address}]` : l.address}:${l.port}`);
    return { public: list, local: list };
  }

  private cdr(type: 'attempt' | 'start' | 'stop', source: string, extra: string | undefined, msg: SipMessage): void {
    const conn = this.server.registry.select(`cdr:${type}`);
    if (conn) conn.send(cdrToClient(type, source, extra, msg.toString()));
  }

  /** counts for tests and metrics */
  stats(): { dialogs: number; pendingInbound: number; pendingOutbound: number; proxies: number } {
    return { dialogs: this.dialogs.size, pendingInbound: this.uas.pendingCount, pendingOutbound: this.uac.pendingCount, proxies: this.proxy.activeCount };
  }
}
