/** SipPort on top of the SIP stack facade (sip-server/stack.ts). */
import { EventEmitter } from 'node:events';
import type { SipRequest } from '../message';
import type { InviteClientTransaction, InviteServerTransaction, ServerTransaction, SipStack } from '../stack';
import type { Endpoint, InboundTransaction, OutboundTransaction, SipPort, SipPortEvents } from './sip-port';

function target(dest: Endpoint | undefined): { target: { transport: Endpoint['transport']; host: string; port: number; connectionId?: string } } | undefined {
  return dest ? { target: { transport: dest.transport, host: dest.address, port: dest.port, ...(dest.connectionId ? { connectionId: dest.connectionId } : {}) } } : undefined;
}

export class StackPort extends EventEmitter<SipPortEvents> implements SipPort {
  constructor(readonly stack: SipStack) {
    super();
    stack.on('request', (_req: SipRequest, srv: ServerTransaction) => this.emit('request', srv as unknown as InboundTransaction));
    // an ACK matched to its INVITE transaction is reported by that transaction's own 'ack' event
    stack.on('ack', (ack: SipRequest, srv: InviteServerTransaction | undefined) => {
      if (!srv) this.emit('ack', ack);
    });
  }

  sendRequest(req: SipRequest, dest?: Endpoint): OutboundTransaction {
    return this.stack.request(req, target(dest)) as unknown as OutboundTransaction;
  }

  sendAck(tx: OutboundTransaction, ack: SipRequest, dest?: Endpoint): void {
    (tx as unknown as InviteClientTransaction).ack(ack, target(dest)?.target);
  }

  sendStateless(req: SipRequest, dest?: Endpoint): void {
    this.stack.sendStateless(req, target(dest)).catch(() => undefined);
  }

  cancel(tx: OutboundTransaction, reason?: string): SipRequest | undefined {
    return (tx as unknown as InviteClientTransaction).cancel(reason);
  }

  localFor(transport: Endpoint['transport']): Endpoint | undefined {
    const lp = this.stack.listeningPoint(transport);
    return lp ? { transport, address: lp.advertisedHost, port: lp.port } : undefined;
  }

  listeningPoints(): Endpoint[] {
    return this.stack.listening.map((l) => ({ transport: l.transport, address: l.advertisedHost, port: l.port }));
  }

  timers(): { t1: number } {
    return this.stack.config.timers;
  }

  pin(connectionId: string, key: string): void {
    this.stack.pinConnection(connectionId, key);
  }

  unpin(connectionId: string, key: string): void {
    this.stack.unpinConnection(connectionId, key);
  }

  isLocal(host: string, port?: number): boolean {
    const h = host.startsWith('[') ? host.slice(1, -1) : host;
    return this.stack.listening.some((l) => {
      const matchesHost = h === l.advertisedHost || h === l.host || (l.host === '0.0.0.0' && (h === '127.0.0.1' || h === 'localhost'));
      return matchesHost && (port ?? (l.transport === 'tls' ? 5061 : 5060)) === l.port;
    });
  }
}
