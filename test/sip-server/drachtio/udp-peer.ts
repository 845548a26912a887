// A bare UDP SIP endpoint for contract tests: sends hand-written messages, collects what arrives.
import dgram from 'node:dgram';
import { parseMessage, SipRequest, SipResponse } from '../../../sip-server/message';

export class UdpPeer {
  readonly received: (SipRequest | SipResponse)[] = [];
  private waiters: { pred: (m: SipRequest | SipResponse) => boolean; resolve: (m: SipRequest | SipResponse) => void }[] = [];

  private constructor(
    readonly socket: dgram.Socket,
    readonly port: number,
  ) {
    socket.on('message', (buf) => {
      let m: SipRequest | SipResponse;
      try {
        m = parseMessage(buf);
      } catch {
        return;
      }
      this.received.push(m);
      for (const w of [...this.waiters]) {
        if (w.pred(m)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    });
  }

  static async open(port: number): Promise<UdpPeer> {
    const s = dgram.createSocket('udp4');
    await new Promise<void>((r) => s.bind(port, '127.0.0.1', () => r()));
    return new UdpPeer(s, port);
  }

  send(text: string, port: number): void {
    this.socket.send(Buffer.from(text.replace(/\r?\n/g, '\r\n')), port, '127.0.0.1');
  }

  waitFor<T extends SipRequest | SipResponse>(pred: (m: SipRequest | SipResponse) => boolean, timeoutMs = 3000): Promise<T> {
    const found = this.received.find(pred);
    if (found) return Promise.resolve(found as T);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('timeout waiting for SIP message')), timeoutMs);
      this.waiters.push({
        pred,
        resolve: (m) => {
          clearTimeout(t);
          resolve(m as T);
        },
      });
    });
  }

  response(status: number, method: string, timeoutMs?: number): Promise<SipResponse> {
    return this.waitFor<SipResponse>((m) => !m.isRequest && (m as SipResponse).status === status && m.cseq.method === method, timeoutMs);
  }

  request(method: string, timeoutMs?: number): Promise<SipRequest> {
    return this.waitFor<SipRequest>((m) => m.isRequest && (m as SipRequest).method === method, timeoutMs);
  }

  close(): void {
    this.socket.close();
  }
}

/** A complete request from a UA at 127.0.0.1:<from>. */
export function uaRequest(
  method: string,
  to: number,
  from: number,
  opts: { callId: string; fromTag?: string; toTag?: string; cseq?: number; branch?: string; body?: string; extra?: string[] },
): string {
  const body = opts.body ?? '';
  const lines = [
    `${method} sip:service@127.0.0.1:${to} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${from};branch=${opts.branch ?? `z9hG4bK${Math.random().toString(36).slice(2)}`};rport`,
    `From: <sip:alice@127.0.0.1:${from}>;tag=${opts.fromTag ?? 'alice1'}`,
    `To: <sip:service@127.0.0.1:${to}>${opts.toTag ? `;tag=${opts.toTag}` : ''}`,
    `Call-ID: ${opts.callId}`,
    `CSeq: ${opts.cseq ?? 1} ${method === 'ACK' || method === 'CANCEL' ? (method === 'ACK' ? 'ACK' : 'CANCEL') : method}`,
    `Contact: <sip:alice@127.0.0.1:${from}>`,
    'Max-Forwards: 70',
    ...(opts.extra ?? []),
    ...(body ? ['Content-Type: application/sdp'] : []),
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ];
  return lines.join('\r\n');
}
