// The transport layer: owns the UDP socket and the TCP/TLS servers, sends to resolved destinations.
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import type { SipConfig } from '../../sip-config';
import type { SourceInfo, TransportName } from '../message';
import type { Destination } from '../transaction/context';
import { UdpTransport } from './udp';
import { StreamTransport } from './stream';
import { WsTransport } from './ws';
import { originCheck } from '../../core/sip/ws-origin';
import type { TransportEvents } from './events';

export type { Target, ResolveOptions } from './resolve';
export { systemResolver, type SipResolver } from '../../core/sip/locate';
export { targetForRequest, targetFromUri, parseTarget, resolveTarget, responseDestination, transportOfUri, defaultPort, isWebSocket } from './resolve';
export { FlowFailedError } from './ws';

/** An address the stack actually listens on. */
export interface ListeningPoint {
  transport: TransportName;
  /** Bound address (may be 0.0.0.0). */
  host: string;
  /** Bound port (the real one when the config said 0). */
  port: number;
  /** Host to write in Via/Contact/Record-Route: config advertisedHost, else the bound host (127.0.0.1 for 0.0.0.0). */
  advertisedHost: string;
}

/** The events the layer passes on from each transport. */
interface TransportSource {
  on(event: 'message', listener: (...args: TransportEvents['message']) => void): unknown;
  on(event: 'frame-error', listener: (...args: TransportEvents['frame-error']) => void): unknown;
  on(event: 'error', listener: (...args: TransportEvents['error']) => void): unknown;
}

export interface TransportLayerEvents extends TransportEvents {
  /** a TCP, TLS or WebSocket connection ended (a WebSocket flow's registrations end with it) */
  'flow-closed': [src: SourceInfo];
}

/** Events: TransportLayerEvents, every transport's TransportEvents passed on, and 'flow-closed'. */
export class TransportLayer extends EventEmitter<TransportLayerEvents> {
  private udp?: UdpTransport;
  private tcp?: StreamTransport;
  private tls?: StreamTransport;
  private ws?: WsTransport;
  private wss?: WsTransport;
  private points: ListeningPoint[] = [];

  /** `uncapped`: addresses the per-address connection bound does not apply to (the allow-list). */
  constructor(
    private readonly config: SipConfig,
    private readonly uncapped: (address: string) => boolean = () => false,
  ) {
    super();
  }

  get listening(): ListeningPoint[] {
    return this.points;
  }

  async start(): Promise<void> {
    const { listen, limits } = this.config;
    const advertise = (bound: string): string => hostForUri(listen.advertisedHost ?? (bound === '0.0.0.0' ? '127.0.0.1' : bound === '::' ? '::1' : bound));
    const advertisedHost = advertise(listen.host);
    const wire = (t: TransportSource): void => {
      t.on('message', (d, s) => this.emit('message', d, s));
      t.on('frame-error', (r, s) => this.emit('frame-error', r, s));
      t.on('error', (e) => this.emit('error', e));
    };
    const wireStream = (t: StreamTransport): void => {
      wire(t);
      t.on('close', (c) => this.emit('flow-closed', c.source));
    };
    let port = listen.port;
    if (listen.transports.includes('udp')) {
      this.udp = new UdpTransport(listen.host, port, limits.udpBufferBytes);
      await this.udp.listen();
      port = this.udp.boundPort; // with port 0, TCP takes the same number as UDP
      wire(this.udp);
      this.points.push({ transport: 'udp', host: listen.host, port, advertisedHost });
    }
    if (listen.transports.includes('tcp')) {
      this.tcp = new StreamTransport({
        kind: 'tcp',
        host: listen.host,
        port,
        maxMessageSize: limits.maxMessageSize,
        idleTimeoutMs: limits.tcpIdleTimeoutMs,
        maxPerAddress: limits.maxConnectionsPerAddress,
        uncapped: this.uncapped,
      });
      await this.tcp.listen();
      wireStream(this.tcp);
      this.points.push({ transport: 'tcp', host: listen.host, port: this.tcp.boundPort, advertisedHost });
    }
    if (listen.transports.includes('tls') && this.config.tls) {
      const cert = fs.readFileSync(this.config.tls.certPath);
      const key = fs.readFileSync(this.config.tls.keyPath);
      this.tls = new StreamTransport({
        kind: 'tls',
        host: listen.host,
        port: listen.tlsPort,
        maxMessageSize: limits.maxMessageSize,
        idleTimeoutMs: limits.tcpIdleTimeoutMs,
        maxPerAddress: limits.maxConnectionsPerAddress,
        uncapped: this.uncapped,
        tls: { cert, key },
      });
      await this.tls.listen();
      wireStream(this.tls);
      this.points.push({ transport: 'tls', host: listen.host, port: this.tls.boundPort, advertisedHost });
    }
    const ws = (kind: 'ws' | 'wss', host: string, port: number): Promise<WsTransport> => {
      const t = new WsTransport({
        kind,
        host,
        port,
        maxMessageSize: limits.maxMessageSize,
        pingIntervalMs: limits.wsPingIntervalMs,
        maxPerAddress: limits.maxConnectionsPerAddress,
        uncapped: this.uncapped,
        originAllowed: originCheck(this.config.security.wsAllowedOrigins),
        tls: kind === 'wss' ? { cert: fs.readFileSync(this.config.tls!.certPath), key: fs.readFileSync(this.config.tls!.keyPath) } : undefined,
      });
      wire(t);
      t.on('close', (s: SourceInfo) => this.emit('flow-closed', s));
      return t.listen().then(() => {
        this.points.push({ transport: kind, host, port: t.boundPort, advertisedHost: advertise(host) });
        return t;
      });
    };
    if (listen.wsPort !== undefined) this.ws = await ws('ws', listen.wsHost, listen.wsPort);
    if (listen.wssPort !== undefined && this.config.tls) this.wss = await ws('wss', listen.host, listen.wssPort);
  }

  /** Open TCP/TLS connections (for metrics). */
  get connectionCount(): number {
    return (this.tcp?.connectionCount ?? 0) + (this.tls?.connectionCount ?? 0) + (this.ws?.connectionCount ?? 0) + (this.wss?.connectionCount ?? 0);
  }

  /**
   * Keep TCP/TLS connection `connectionId` open however long it is idle, until `until` (epoch ms;
   * default: until unpinned) or unpin with the same key. WebSocket connections are never closed for
   * idleness (they are pinged), so pins on them are no-ops, as on a connection already gone.
   */
  pin(connectionId: string, key: string, until?: number): void {
    this.streamOf(connectionId)?.pin(connectionId, key, until);
  }

  unpin(connectionId: string, key: string): void {
    this.streamOf(connectionId)?.unpin(connectionId, key);
  }

  private streamOf(connectionId: string): StreamTransport | undefined {
    return connectionId.startsWith('tcp-') ? this.tcp : connectionId.startsWith('tls-') ? this.tls : undefined;
  }

  send(data: Buffer, dest: Destination): Promise<void> {
    switch (dest.transport) {
      case 'udp':
        if (!this.udp) return Promise.reject(new Error('udp transport not enabled'));
        return this.udp.send(data, dest.address, dest.port);
      case 'tcp':
        if (!this.tcp) return Promise.reject(new Error('tcp transport not enabled'));
        return this.tcp.send(data, dest.address, dest.port, dest.connectionId);
      case 'tls':
        if (!this.tls) return Promise.reject(new Error('tls transport not enabled'));
        return this.tls.send(data, dest.address, dest.port, dest.connectionId);
      case 'ws':
      case 'wss': {
        const t = dest.transport === 'ws' ? this.ws : this.wss;
        if (!t) return Promise.reject(new Error(`${dest.transport} transport not enabled`));
        return t.send(data, dest.address, dest.port, dest.connectionId);
      }
      default:
        return Promise.reject(new Error(`unknown transport ${String(dest.transport)}`));
    }
  }

  async stop(): Promise<void> {
    await Promise.all([this.udp?.close(), this.tcp?.close(), this.tls?.close(), this.ws?.close(), this.wss?.close()]);
    this.udp = this.tcp = this.tls = this.ws = this.wss = undefined;
    this.points = [];
  }
}

function hostForUri(h: string): string {
  return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
}
