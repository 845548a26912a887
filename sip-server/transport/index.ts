// The transport layer: owns the UDP socket and the TCP/TLS servers, sends to resolved destinations.
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import type { SipConfig } from '../../sip-config';
import type { SourceInfo, TransportName } from '../message';
import type { Destination } from '../transaction/context';
import { UdpTransport } from './udp';
import { StreamTransport } from './stream';

export type { Target, ResolveOptions } from './resolve';
export { systemResolver, type SipResolver } from './locate';
export { targetForRequest, targetFromUri, parseTarget, resolveTarget, responseDestination } from './resolve';

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

/** Events: 'message' (data: Buffer, src: SourceInfo), 'frame-error' (reason, src), 'error' (err). */
export class TransportLayer extends EventEmitter {
  private udp?: UdpTransport;
  private tcp?: StreamTransport;
  private tls?: StreamTransport;
  private points: ListeningPoint[] = [];

  constructor(private readonly config: SipConfig) {
    super();
  }

  get listening(): ListeningPoint[] { return this.points; }

  async start(): Promise<void> {
    const { listen, limits } = this.config;
    const adv = listen.advertisedHost ?? (listen.host === '0.0.0.0' ? '127.0.0.1' : listen.host === '::' ? '::1' : listen.host);
    const advertisedHost = adv.includes(':') && !adv.startsWith('[') ? `[${adv}]` : adv;
    const wire = (t: EventEmitter): void => {
      t.on('message', (d: Buffer, s: SourceInfo) => this.emit('message', d, s));
      t.on('frame-error', (r: string, s: SourceInfo) => this.emit('frame-error', r, s));
      t.on('error', (e: Error) => this.emit('error', e));
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
      this.tcp = new StreamTransport({ kind: 'tcp', host: listen.host, port, maxMessageSize: limits.maxMessageSize, idleTimeoutMs: limits.tcpIdleTimeoutMs });
      await this.tcp.listen();
      wire(this.tcp);
      this.points.push({ transport: 'tcp', host: listen.host, port: this.tcp.boundPort, advertisedHost });
    }
    if (listen.transports.includes('tls') && this.config.tls) {
      const cert = fs.readFileSync(this.config.tls.certPath);
      const key = fs.readFileSync(this.config.tls.keyPath);
      this.tls = new StreamTransport({ kind: 'tls', host: listen.host, port: listen.tlsPort, maxMessageSize: limits.maxMessageSize, idleTimeoutMs: limits.tcpIdleTimeoutMs, tls: { cert, key } });
      await this.tls.listen();
      wire(this.tls);
      this.points.push({ transport: 'tls', host: listen.host, port: this.tls.boundPort, advertisedHost });
    }
  }

  /** Open TCP/TLS connections (for metrics). */
  get connectionCount(): number { return (this.tcp?.connectionCount ?? 0) + (this.tls?.connectionCount ?? 0); }

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
      default:
        return Promise.reject(new Error(`unknown transport ${String(dest.transport)}`));
    }
  }

  async stop(): Promise<void> {
    await Promise.all([this.udp?.close(), this.tcp?.close(), this.tls?.close()]);
    this.udp = this.tcp = this.tls = undefined;
    this.points = [];
  }
}
