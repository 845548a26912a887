// A minimal SIP party over UDP on loopback for tests whose SDP is computed at run time (e.g. by a
// second rtpengine acting as the far end's SRTP stack): it places one call (INVITE, ACK, re-INVITE,
// BYE) or answers one (200 with an SDP a handler returns), and answers BYEs. No authentication, no
// forking; INVITE and 200 are retransmitted a few times, as loopback needs little more.
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';

export interface SipMsg {
  raw: string;
  /** Request method, or '' for a response. */
  method: string;
  status: number;
  headers: [string, string][];
  body: string;
  get(name: string): string | undefined;
}

export function parseSip(raw: string): SipMsg {
  const [head = '', body = ''] = raw.split('\r\n\r\n', 2);
  const lines = head.split('\r\n');
  const first = lines[0] ?? '';
  const resp = /^SIP\/2\.0 (\d{3})/.exec(first);
  const headers = lines.slice(1).map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim()] as [string, string];
  });
  return {
    raw,
    method: resp ? '' : first.split(' ')[0]!,
    status: resp ? Number(resp[1]) : 0,
    headers,
    body,
    get: (name) => headers.find(([k]) => k === name.toLowerCase())?.[1],
  };
}

export interface PeerCall {
  /** The far side's final SDP (200 for our INVITE, the INVITE for an incoming one). */
  remoteSdp: string;
  /** A re-INVITE with this SDP; resolves with the answer (200) or rejects with the status. */
  reinvite(sdp: string): Promise<string>;
  bye(): Promise<number>;
  /** Resolves when the other side sends BYE. */
  byeReceived: Promise<void>;
}

export class SipPeer {
  private readonly sock = dgram.createSocket('udp4');
  port = 0;
  private readonly waiters = new Map<string, (m: SipMsg) => void>();
  private inviteHandler: ((invite: SipMsg) => Promise<{ status: number; sdp?: string }>) | null = null;
  private readonly byes = new Map<string, () => void>();
  private cseq = 1;
  /** Every message received (for assertions). */
  readonly received: SipMsg[] = [];

  static async open(): Promise<SipPeer> {
    const p = new SipPeer();
    await new Promise<void>((r) => p.sock.bind(0, '127.0.0.1', r));
    p.port = p.sock.address().port;
    p.sock.on('message', (b, rinfo) => p.onMessage(parseSip(b.toString()), rinfo.port));
    return p;
  }

  /** Answers the next incoming INVITEs with the handler's status and SDP. */
  onInvite(fn: (invite: SipMsg) => Promise<{ status: number; sdp?: string }>): void {
    this.inviteHandler = fn;
  }

  private send(text: string, port: number): void {
    this.sock.send(Buffer.from(text), port, '127.0.0.1');
  }

  private onMessage(m: SipMsg, fromPort: number): void {
    this.received.push(m);
    const callId = m.get('call-id') ?? '';
    const cseq = m.get('cseq') ?? '';
    if (!m.method) {
      if (m.status >= 200 || m.status === 183) this.waiters.get(`${callId}|${cseq}`)?.(m);
      return;
    }
    if (m.method === 'ACK') return this.waiters.get(`${callId}|ack`)?.(m);
    const reply = (status: number, reason: string, extra: string[] = [], body = '') =>
      this.send(
        [
          `SIP/2.0 ${status} ${reason}`,
          ...m.headers.filter(([k]) => k === 'via' || k === 'record-route').map(([k, v]) => `${k === 'via' ? 'Via' : 'Record-Route'}: ${v}`),
          `From: ${m.get('from')}`,
          `To: ${m.get('to')}${/;tag=/.test(m.get('to') ?? '') || status < 200 ? '' : `;tag=peer${this.port}`}`,
          `Call-ID: ${callId}`,
          `CSeq: ${cseq}`,
          `Contact: <sip:peer@127.0.0.1:${this.port}>`,
          ...extra,
          ...(body ? ['Content-Type: application/sdp'] : []),
          `Content-Length: ${Buffer.byteLength(body)}`,
          '',
          body,
        ].join('\r\n'),
        fromPort,
      );
    if (m.method === 'BYE') {
      reply(200, 'OK');
      this.byes.get(callId)?.();
      return;
    }
    if (m.method === 'INVITE') {
      const handler = this.inviteHandler;
      if (!handler) return reply(488, 'Not Acceptable Here');
      reply(100, 'Trying');
      void handler(m).then(
        (r) => reply(r.status, r.status === 200 ? 'OK' : 'Refused', [], r.sdp ?? ''),
        () => reply(500, 'Server Error'),
      );
      return;
    }
    reply(200, 'OK');
  }

  private request(key: string, text: string, port: number, ms = 8000): Promise<SipMsg> {
    return new Promise<SipMsg>((resolve, reject) => {
      let n = 0;
      const resend = setInterval(() => (++n < 4 ? this.send(text, port) : clearInterval(resend)), 500);
      const timer = setTimeout(() => {
        clearInterval(resend);
        this.waiters.delete(key);
        reject(new Error(`no final response to ${key}`));
      }, ms);
      this.waiters.set(key, (m) => {
        clearInterval(resend);
        if (m.status < 200) return;
        clearTimeout(timer);
        this.waiters.delete(key);
        resolve(m);
      });
      this.send(text, port);
    });
  }

  /**
   * Calls `ruri` at the SIP server on `port` with `sdp`. Resolves with the call once answered
   * (ACK sent) or rejects with an Error carrying `status` for a final failure (ACKed).
   */
  async invite(ruri: string, port: number, sdp: string, fromUser = 'peer'): Promise<PeerCall> {
    const callId = `peer-${randomBytes(6).toString('hex')}@127.0.0.1`;
    const fromTag = randomBytes(4).toString('hex');
    const from = `<sip:${fromUser}@127.0.0.1:${this.port}>;tag=${fromTag}`;
    const lines = (method: string, cseq: number, to: string, branch: string, body = '', uri = `sip:${ruri}`) =>
      [
        `${method} ${uri} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${this.port};branch=z9hG4bK${branch};rport`,
        `From: ${from}`,
        `To: ${to}`,
        `Call-ID: ${callId}`,
        `CSeq: ${cseq} ${method}`,
        `Contact: <sip:${fromUser}@127.0.0.1:${this.port}>`,
        'Max-Forwards: 70',
        ...(body ? ['Content-Type: application/sdp'] : []),
        `Content-Length: ${Buffer.byteLength(body)}`,
        '',
        body,
      ].join('\r\n');
    const cseq = this.cseq++;
    const branch = randomBytes(5).toString('hex');
    const r = await this.request(`${callId}|${cseq} INVITE`, lines('INVITE', cseq, `<sip:${ruri}>`, branch, sdp), port);
    const to = r.get('to') ?? `<sip:${ruri}>`;
    // ACK: same branch for a failure (hop by hop), a new one for a 2xx
    this.send(lines('ACK', cseq, to, r.status >= 300 ? branch : randomBytes(5).toString('hex')), port);
    if (r.status >= 300) throw Object.assign(new Error(`INVITE refused: ${r.status}`), { status: r.status });
    let byeSeen!: () => void;
    const byeReceived = new Promise<void>((res) => (byeSeen = res));
    this.byes.set(callId, byeSeen);
    const target = /<([^>]+)>/.exec(r.get('contact') ?? '')?.[1] ?? `sip:${ruri}`;
    return {
      remoteSdp: r.body,
      byeReceived,
      reinvite: async (sdp2) => {
        const c = this.cseq++;
        const rr = await this.request(`${callId}|${c} INVITE`, lines('INVITE', c, to, randomBytes(5).toString('hex'), sdp2, target), port);
        this.send(lines('ACK', c, to, randomBytes(5).toString('hex'), '', target), port);
        if (rr.status !== 200) throw Object.assign(new Error(`re-INVITE refused: ${rr.status}`), { status: rr.status });
        return rr.body;
      },
      bye: async () => {
        const c = this.cseq++;
        return (await this.request(`${callId}|${c} BYE`, lines('BYE', c, to, randomBytes(5).toString('hex'), '', target), port)).status;
      },
    };
  }

  close(): void {
    this.sock.close();
  }
}
