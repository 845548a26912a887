// A SIP event subscriber over UDP on loopback for the BLF / presence / MWI tests and the BLF
// benchmark: it sends SUBSCRIBE out of dialog, answers the platform's digest challenge (401 or 407,
// MD5 with qop=auth), refreshes and ends subscriptions in dialog, and answers every NOTIFY it gets
// (200, or the status a test sets, e.g. 481) while keeping them for assertions. Many subscriptions
// share one socket (the benchmark holds a thousand on a few sockets).
import dgram from 'node:dgram';
import { createHash, randomBytes } from 'node:crypto';

export interface SipMessage {
  raw: string;
  /** Request method, or '' for a response. */
  method: string;
  status: number;
  body: string;
  get(name: string): string | undefined;
  /** Every value of a header, in order (Via through a proxy has several). */
  getAll(name: string): string[];
}

export function parseSipMessage(raw: string): SipMessage {
  const cut = raw.indexOf('\r\n\r\n');
  const head = cut < 0 ? raw : raw.slice(0, cut);
  const body = cut < 0 ? '' : raw.slice(cut + 4);
  const lines = head.split('\r\n');
  const first = lines[0] ?? '';
  const resp = /^SIP\/2\.0 (\d{3})/.exec(first);
  const headers = lines.slice(1).map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim()] as const;
  });
  return {
    raw,
    method: resp ? '' : first.split(' ')[0]!,
    status: resp ? Number(resp[1]) : 0,
    body,
    get: (name) => headers.find(([k]) => k === name.toLowerCase())?.[1],
    getAll: (name) => headers.filter(([k]) => k === name.toLowerCase()).map(([, v]) => v),
  };
}

export interface SubscribeOptions {
  /** The extension that subscribes, its registration domain and password. */
  user: string;
  domain: string;
  password: string;
  /** The Request-URI user (the watched extension or park slot), at `resourceDomain` (default `domain`). */
  resource: string;
  resourceDomain?: string;
  event: string;
  /** The Accept header (omitted when undefined). */
  accept?: string;
  expires: number;
  /** Answer the challenge (default true); false keeps the 401/407 as the answer. */
  answerChallenge?: boolean;
}

export interface Subscription {
  /** The final answer to the SUBSCRIBE (after the challenge). */
  response: SipMessage;
  callId: string;
  /** NOTIFYs of this subscription so far, in arrival order. */
  notifies: SipMessage[];
  /** Resolves with the first NOTIFY of this subscription satisfying `pred` (those already received count). */
  waitFor(pred?: (n: SipMessage) => boolean, timeoutMs?: number): Promise<SipMessage>;
  /** An in-dialog SUBSCRIBE (refresh, or Expires: 0 to end it); resolves with its final answer. */
  refresh(expires: number): Promise<SipMessage>;
}

interface Pending {
  resolve(m: SipMessage): void;
}

interface DialogState {
  callId: string;
  fromTag: string;
  toTag: string;
  cseq: number;
  o: SubscribeOptions;
  notifies: SipMessage[];
  watchers: { pred: (n: SipMessage) => boolean; resolve(n: SipMessage): void }[];
}

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

/** The `key=value` parameters of a Digest challenge. */
function challengeParams(h: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of h.replace(/^\s*Digest\s+/i, '').matchAll(/([a-z]+)="?([^",]*)"?/gi)) out[m[1]!.toLowerCase()] = m[2]!;
  return out;
}

/** The Authorization (401) or Proxy-Authorization (407) header answering a challenge with MD5, qop=auth. */
function digestAnswer(challenge: SipMessage, method: string, uri: string, user: string, password: string): string {
  const header = challenge.status === 407 ? 'proxy-authenticate' : 'www-authenticate';
  const p = challengeParams(challenge.getAll(header).find((h) => !/algorithm=SHA-256/i.test(h)) ?? '');
  const cnonce = randomBytes(6).toString('hex');
  const nc = '00000001';
  const ha1 = md5(`${user}:${p.realm}:${password}`);
  const ha2 = md5(`${method}:${uri}`);
  const response = md5(`${ha1}:${p.nonce}:${nc}:${cnonce}:auth:${ha2}`);
  const name = challenge.status === 407 ? 'Proxy-Authorization' : 'Authorization';
  return `${name}: Digest username="${user}", realm="${p.realm}", nonce="${p.nonce}", uri="${uri}", response="${response}", algorithm=MD5, qop=auth, nc=${nc}, cnonce="${cnonce}"`;
}

export class Subscriber {
  private readonly sock = dgram.createSocket('udp4');
  port = 0;
  /** The status NOTIFYs are answered with (200; 481 tells the platform the subscription is gone). */
  notifyAnswer = 200;
  /** Every NOTIFY received, for any subscription (not kept when `keep` is false: the benchmark's thousands). */
  readonly notifies: SipMessage[] = [];
  keep = true;
  /** Called with each NOTIFY as it arrives (after it is answered). */
  onNotify: ((m: SipMessage) => void) | null = null;
  private readonly pending = new Map<string, Pending>();
  private readonly dialogs = new Map<string, DialogState>();

  private constructor(private readonly sipPort: number) {}

  static async open(sipPort: number): Promise<Subscriber> {
    const s = new Subscriber(sipPort);
    await new Promise<void>((r) => s.sock.bind(0, '127.0.0.1', r));
    s.port = s.sock.address().port;
    s.sock.on('message', (b, from) => s.onMessage(parseSipMessage(b.toString()), from.port));
    return s;
  }

  private send(text: string, port = this.sipPort): void {
    this.sock.send(Buffer.from(text), port, '127.0.0.1');
  }

  /** `fromPort`: where the message came from; a request is answered there (another node's sip-server may send an out-of-dialog NOTIFY). */
  private onMessage(m: SipMessage, fromPort: number): void {
    const callId = m.get('call-id') ?? '';
    if (!m.method) {
      if (m.status >= 200) this.pending.get(`${callId}|${m.get('cseq')}`)?.resolve(m);
      return;
    }
    const answer = m.method === 'NOTIFY' ? this.notifyAnswer : 200;
    this.send(
      [
        `SIP/2.0 ${answer} ${answer === 200 ? 'OK' : 'Call/Transaction Does Not Exist'}`,
        ...m.getAll('via').map((v) => `Via: ${v}`),
        `From: ${m.get('from')}`,
        `To: ${m.get('to')}`,
        `Call-ID: ${callId}`,
        `CSeq: ${m.get('cseq')}`,
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
      fromPort,
    );
    if (m.method !== 'NOTIFY') return;
    this.onNotify?.(m);
    if (!this.keep) return;
    this.notifies.push(m);
    const d = this.dialogs.get(callId);
    if (!d) return;
    d.notifies.push(m);
    // the dialog's remote tag is the platform's From tag (the 202 may come after the first NOTIFY)
    const tag = /;tag=([^;>\s]+)/.exec(m.get('from') ?? '')?.[1];
    if (tag && !d.toTag) d.toTag = tag;
    for (const w of [...d.watchers]) {
      if (!w.pred(m)) continue;
      d.watchers.splice(d.watchers.indexOf(w), 1);
      w.resolve(m);
    }
  }

  /** Sends a request and resolves with its final response (retransmitted over UDP for 4 s). */
  private request(callId: string, cseq: string, text: string, timeoutMs = 8000): Promise<SipMessage> {
    const key = `${callId}|${cseq}`;
    return new Promise<SipMessage>((resolve, reject) => {
      let n = 0;
      const resend = setInterval(() => (++n < 8 ? this.send(text) : clearInterval(resend)), 500);
      const timer = setTimeout(() => {
        clearInterval(resend);
        this.pending.delete(key);
        reject(new Error(`no final response to ${cseq}`));
      }, timeoutMs);
      this.pending.set(key, {
        resolve: (m) => {
          clearInterval(resend);
          clearTimeout(timer);
          this.pending.delete(key);
          resolve(m);
        },
      });
      this.send(text);
    });
  }

  private subscribeText(d: DialogState, expires: number, auth?: string): string {
    const o = d.o;
    const ruri = `sip:${o.resource}@${o.resourceDomain ?? o.domain}`;
    return [
      `SUBSCRIBE ${ruri} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${this.port};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`,
      `From: <sip:${o.user}@${o.domain}>;tag=${d.fromTag}`,
      `To: <${ruri}>${d.toTag ? `;tag=${d.toTag}` : ''}`,
      `Call-ID: ${d.callId}`,
      `CSeq: ${d.cseq} SUBSCRIBE`,
      `Contact: <sip:${o.user}@127.0.0.1:${this.port}>`,
      `Event: ${o.event}`,
      ...(o.accept !== undefined ? [`Accept: ${o.accept}`] : []),
      ...endOfRequest(expires, auth),
    ].join('\r\n');
  }

  private authorization(d: DialogState, challenge: SipMessage): string {
    return digestAnswer(challenge, 'SUBSCRIBE', `sip:${d.o.resource}@${d.o.resourceDomain ?? d.o.domain}`, d.o.user, d.o.password);
  }

  /**
   * Registers this socket as a contact of the extension (REGISTER with digest): out-of-dialog
   * NOTIFYs (unsolicited MWI) then reach it too, and count in `notifies`. Resolves with the final answer.
   */
  async register(o: { user: string; domain: string; password: string; expires: number }): Promise<SipMessage> {
    const callId = `reg-${randomBytes(8).toString('hex')}@127.0.0.1`;
    const tag = randomBytes(4).toString('hex');
    const text = (cseq: number, auth?: string) =>
      [
        `REGISTER sip:${o.domain} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${this.port};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`,
        `From: <sip:${o.user}@${o.domain}>;tag=${tag}`,
        `To: <sip:${o.user}@${o.domain}>`,
        `Call-ID: ${callId}`,
        `CSeq: ${cseq} REGISTER`,
        `Contact: <sip:${o.user}@127.0.0.1:${this.port}>`,
        ...endOfRequest(o.expires, auth),
      ].join('\r\n');
    const r = await this.request(callId, '1 REGISTER', text(1));
    if (r.status !== 401 && r.status !== 407) return r;
    return this.request(callId, '2 REGISTER', text(2, digestAnswer(r, 'REGISTER', `sip:${o.domain}`, o.user, o.password)));
  }

  async subscribe(o: SubscribeOptions): Promise<Subscription> {
    const d: DialogState = { callId: `sub-${randomBytes(8).toString('hex')}@127.0.0.1`, fromTag: randomBytes(4).toString('hex'), toTag: '', cseq: 1, o, notifies: [], watchers: [] };
    this.dialogs.set(d.callId, d);
    let r = await this.request(d.callId, `${d.cseq} SUBSCRIBE`, this.subscribeText(d, o.expires));
    if ((r.status === 401 || r.status === 407) && o.answerChallenge !== false) {
      d.cseq++;
      r = await this.request(d.callId, `${d.cseq} SUBSCRIBE`, this.subscribeText(d, o.expires, this.authorization(d, r)));
    }
    const tag = /;tag=([^;>\s]+)/.exec(r.get('to') ?? '')?.[1];
    if (r.status < 300 && tag) d.toTag = tag;
    return {
      response: r,
      callId: d.callId,
      notifies: d.notifies,
      waitFor: (pred = () => true, timeoutMs = 5000) => this.waitFor(d, pred, timeoutMs),
      refresh: async (expires) => {
        d.cseq++;
        return this.request(d.callId, `${d.cseq} SUBSCRIBE`, this.subscribeText(d, expires));
      },
    };
  }

  private waitFor(d: DialogState, pred: (n: SipMessage) => boolean, timeoutMs: number): Promise<SipMessage> {
    const had = d.notifies.find(pred);
    if (had) return Promise.resolve(had);
    return new Promise<SipMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        d.watchers.splice(d.watchers.indexOf(w), 1);
        reject(new Error(`no NOTIFY as expected within ${timeoutMs} ms (${d.notifies.length} received)`));
      }, timeoutMs);
      const w = {
        pred,
        resolve: (n: SipMessage) => {
          clearTimeout(timer);
          resolve(n);
        },
      };
      d.watchers.push(w);
    });
  }

  close(): void {
    this.sock.close();
  }
}

/** The last lines of a bodiless REGISTER or SUBSCRIBE: Expires, Max-Forwards, the digest answer if any, no body. */
function endOfRequest(expires: number, auth?: string): string[] {
  return [`Expires: ${expires}`, 'Max-Forwards: 70', ...(auth ? [auth] : []), 'Content-Length: 0', '', ''];
}
