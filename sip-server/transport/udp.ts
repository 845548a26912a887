// UDP transport: one socket per listening address, enlarged kernel buffers, 64 KiB datagrams.
import dgram from 'node:dgram';
import net from 'node:net';
import { EventEmitter } from 'node:events';
import type { SourceInfo } from '../message';
import { ipLookup } from '../../core/net/ip-lookup';
import type { TransportEvents } from './events';

/** Events (TransportEvents): 'message' and 'error'; a datagram is never a framing error. */
export class UdpTransport extends EventEmitter<TransportEvents> {
  private socket?: dgram.Socket;
  boundPort = 0;
  /** Receive buffer size the kernel actually granted. */
  recvBufferSize = 0;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly bufferBytes: number,
  ) {
    super();
  }

  async listen(): Promise<void> {
    const type = net.isIPv6(this.host) ? 'udp6' : 'udp4';
    // destinations are IP literals but for a response to a Via sent-by name: no lookup per message
    const s = dgram.createSocket({ type, reuseAddr: false, lookup: ipLookup as never });
    this.socket = s;
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.bind(this.port, this.host, () => {
        s.off('error', reject);
        resolve();
      });
    });
    // bursts of INVITEs overflow the default ~208 KB buffer; ask for more (capped by rmem_max)
    try {
      s.setRecvBufferSize(this.bufferBytes);
    } catch {
      /* keep the default */
    }
    try {
      s.setSendBufferSize(this.bufferBytes);
    } catch {
      /* keep the default */
    }
    this.recvBufferSize = s.getRecvBufferSize();
    this.boundPort = s.address().port;
    const local = s.address();
    s.on('error', (e) => this.emit('error', e));
    s.on('message', (data, rinfo) => {
      const src: SourceInfo = {
        transport: 'udp',
        address: rinfo.address,
        port: rinfo.port,
        localAddress: local.address,
        localPort: local.port,
      };
      this.emit('message', data, src);
    });
  }

  send(data: Buffer, address: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (!this.socket) return reject(new Error('UDP transport not started'));
      if (data.length > 65507) return reject(new Error(`message of ${data.length} bytes is too large for UDP`));
      this.socket.send(data, port, address, (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    const s = this.socket;
    this.socket = undefined;
    if (s) await new Promise<void>((r) => s.close(() => r()));
  }
}
