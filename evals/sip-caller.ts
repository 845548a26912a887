/**
 * A simulated caller's SIP side: a user agent client on its own UDP socket that dials a number
 * through the platform's SIP edge (INVITE with the caller's SDP, ACK, BYE), as a phone or a carrier
 * would; nothing of media-app is reached but through the edge. RFC 3261 over UDP: the INVITE is
 * retransmitted (timer A) until a provisional response and given up after timer B or the answer
 * timeout; the BYE is retransmitted (timer E) until its final response or timer F. It answers the
 * platform's in-dialog requests: BYE (the agent hung up: `ended` resolves 'agent'), a re-INVITE (200 with
 * the same SDP), anything else 200. Every timer belongs to the transaction that armed it and is
 * cleared when it completes or the caller closes.
 */
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { cseqMethod, header, parseSip, request, response, sdpAudio, tagOf, type SipMessage } from './sip-message';

const T1 = 500;
const T2 = 4000;
const rand = (n = 8) => randomBytes(n).toString('hex');

export type DialOutcome = { answered: true; remote: { host: string; port: number } } | { answered: false; status: number; reason: string };

export interface SipCallerOptions {
  /** the platform's SIP edge (UDP) */
  edge: { host: string; port: number };
  /** the address this caller binds and writes into Via/Contact/SDP */
  localHost: string;
  /** give up on an INVITE not answered in this time (a final response) */
  answerTimeoutMs: number;
  /** the Call-ID to send (newCallId()); one is made when absent */
  callId?: string;
}

/** A fresh Call-ID as a simulated caller sends it; made ahead when the run pins the call (an AI version). */
export const newCallId = (): string => `${rand(12)}@openvoice-evals`;

export class SipCaller {
  private readonly sock = dgram.createSocket('udp4');
  readonly callId: string;
  private readonly fromTag = rand(6);
  private port = 0;
  private toHeader = '';
  private remoteTarget = '';
  private routes: string[] = [];
  private cseq = 1;
  private sdp = '';
  private readonly timers = new Set<NodeJS.Timeout>();
  private onMessage: ((m: SipMessage) => void) | null = null;
  private endedBy: ((by: 'agent' | 'caller') => void) | null = null;
  /** resolves once the dialog ended: the platform's BYE ('agent') or this caller's ('caller') */
  readonly ended: Promise<'agent' | 'caller'> = new Promise((r) => (this.endedBy = r));
  private closed = false;

  private constructor(private readonly o: SipCallerOptions) {
    this.callId = o.callId ?? newCallId();
  }

  static async open(o: SipCallerOptions): Promise<SipCaller> {
    const c = new SipCaller(o);
    c.sock.on('error', () => c.close());
    await new Promise<void>((resolve, reject) => {
      c.sock.once('error', reject);
      c.sock.bind(0, o.localHost, () => {
        c.sock.off('error', reject);
        resolve();
      });
    });
    c.port = c.sock.address().port;
    c.sock.on('message', (buf) => {
      const m = parseSip(buf);
      if (m) c.receive(m);
    });
    return c;
  }

  private get local(): string {
    return `${this.o.localHost}:${this.port}`;
  }

  private send(text: string): void {
    if (!this.closed) this.sock.send(text, this.o.edge.port, this.o.edge.host);
  }

  private timer(fn: () => void, ms: number): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
    return t;
  }

  private clear(t: NodeJS.Timeout | null): void {
    if (!t) return;
    clearTimeout(t);
    this.timers.delete(t);
  }

  private via(branch: string): [string, string] {
    return ['Via', `SIP/2.0/UDP ${this.local};branch=z9hG4bK${branch};rport`];
  }

  private common(branch: string, cseq: string): [string, string][] {
    return [
      this.via(branch),
      ['Max-Forwards', '70'],
      ['From', `<sip:evals@${this.o.localHost}>;tag=${this.fromTag}`],
      ['To', this.toHeader],
      ['Call-ID', this.callId],
      ['CSeq', cseq],
      ...this.routes.map((r) => ['Route', r] as [string, string]),
    ];
  }

  /** Sends the INVITE for `number` with `sdp` and resolves with the answer (and the platform's audio address) or the refusal. */
  dial(number: string, sdp: string): Promise<DialOutcome> {
    this.sdp = sdp;
    const uri = `sip:${number}@${this.o.edge.host}:${this.o.edge.port}`;
    this.toHeader = `<${uri}>`;
    this.remoteTarget = uri;
    const branch = rand();
    const invite = request('INVITE', uri, [...this.common(branch, '1 INVITE'), ['Contact', `<sip:evals@${this.local}>`], ['User-Agent', 'openvoice-evals']], sdp);
    return new Promise<DialOutcome>((resolve) => {
      let retransmit: NodeJS.Timeout | null = null;
      let giveUp: NodeJS.Timeout | null = null;
      const finish = (o: DialOutcome) => {
        this.clear(retransmit);
        this.clear(giveUp);
        this.onMessage = null;
        resolve(o);
      };
      const again = (ms: number) => {
        retransmit = this.timer(() => {
          this.send(invite);
          again(Math.min(ms * 2, T2));
        }, ms);
      };
      giveUp = this.timer(() => finish({ answered: false, status: 408, reason: 'no final response to the INVITE' }), this.o.answerTimeoutMs);
      this.onMessage = (m) => {
        if (m.method !== null || cseqMethod(m) !== 'INVITE') return;
        if (m.status < 200) return this.clear(retransmit);
        if (m.status >= 300) {
          this.send(request('ACK', uri, [this.via(branch), ['Max-Forwards', '70'], ['From', header(m, 'from')], ['To', header(m, 'to')], ['Call-ID', this.callId], ['CSeq', '1 ACK']]));
          return finish({ answered: false, status: m.status, reason: `the edge answered ${m.status}` });
        }
        this.establish(m);
        const remote = sdpAudio(m.body);
        finish(remote ? { answered: true, remote } : { answered: false, status: 488, reason: 'the 200 OK carried no audio address' });
        if (!remote) void this.hangup();
      };
      this.send(invite);
      again(T1);
    });
  }

  /** The dialog from the 2xx: the remote tag and target, the route set; the ACK (again for each retransmitted 2xx). */
  private establish(ok: SipMessage): void {
    this.toHeader = header(ok, 'to');
    const contact = /<([^>]+)>/.exec(header(ok, 'contact'))?.[1];
    if (contact) this.remoteTarget = contact;
    this.routes = (ok.headers.get('record-route') ?? []).flatMap((v) => v.split(/,(?=\s*<)/).map((x) => x.trim())).reverse();
    this.ack();
  }

  private ack(): void {
    this.send(request('ACK', this.remoteTarget, this.common(rand(), '1 ACK')));
  }

  /** Sends BYE (retransmitted until answered, at most timer F) and ends the dialog as the caller's. */
  async hangup(): Promise<void> {
    if (this.closed || !tagOf(this.toHeader)) return;
    this.endedBy?.('caller');
    const bye = request('BYE', this.remoteTarget, this.common(rand(), `${++this.cseq} BYE`));
    await new Promise<void>((resolve) => {
      let retransmit: NodeJS.Timeout | null = null;
      const giveUp = this.timer(() => done(), 64 * T1);
      const done = () => {
        this.clear(retransmit);
        this.clear(giveUp);
        this.onMessage = null;
        resolve();
      };
      const again = (ms: number) => {
        retransmit = this.timer(() => {
          this.send(bye);
          again(Math.min(ms * 2, T2));
        }, ms);
      };
      this.onMessage = (m) => {
        if (m.method === null && cseqMethod(m) === 'BYE' && m.status >= 200) done();
      };
      this.send(bye);
      again(T1);
    });
  }

  private receive(m: SipMessage): void {
    if (m.method === null) {
      // a retransmitted 2xx of the INVITE once the dialog is up: ACK it again
      if (m.status >= 200 && m.status < 300 && cseqMethod(m) === 'INVITE' && !this.onMessage) return this.ack();
      return this.onMessage?.(m);
    }
    if (header(m, 'call-id') !== this.callId || m.method === 'ACK') return;
    const contact: [string, string][] = [['Contact', `<sip:evals@${this.local}>`]];
    if (m.method === 'BYE') {
      this.send(response(m, 200, 'OK', ''));
      this.endedBy?.('agent');
      return;
    }
    if (m.method === 'INVITE') return this.send(response(m, 200, 'OK', '', contact, this.sdp));
    this.send(response(m, 200, 'OK', '', m.method === 'UPDATE' ? contact : []));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.endedBy?.('caller');
    try {
      this.sock.close();
    } catch {
      // a socket whose bind failed is closed already
    }
  }
}
