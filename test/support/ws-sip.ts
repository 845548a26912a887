// A SIP user agent over WebSocket (RFC 7118) for tests: a real `ws` client speaking SIP text, one
// message per frame, with a made-up *.invalid Contact host as browsers use. Digest answers for
// REGISTER and INVITE; incoming requests are queued for the test to answer.
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { authorization } from '../media-app/digest-client';

export interface WsMessage {
  raw: string;
  /** request method, or undefined for a response */
  method?: string;
  status?: number;
  headers: [string, string][];
  body: string;
  header(name: string): string | undefined;
}

export function parseSip(raw: string): WsMessage {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const lines = head!.split('\r\n');
  const first = lines[0]!;
  const headers = lines.slice(1).map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim()] as [string, string];
  });
  const m = /^SIP\/2\.0 (\d{3})/.exec(first);
  return {
    raw,
    headers,
    body: rest.join('\r\n\r\n'),
    method: m ? undefined : first.split(' ')[0],
    status: m ? Number(m[1]) : undefined,
    header: (n) => headers.find(([k]) => k === n.toLowerCase())?.[1],
  };
}

const tok = (n = 6) => randomBytes(n).toString('hex');

export interface WsPhoneOptions {
  /** offered subprotocols (default ['sip']) */
  protocols?: string[];
  /** CA to trust for wss */
  ca?: Buffer;
}

export class WsSipPhone {
  readonly host = `${tok(4)}.invalid`;
  readonly requests: WsMessage[] = [];
  private waiters: { match: (m: WsMessage) => boolean; resolve: (m: WsMessage) => void }[] = [];
  private cseq = 0;
  user = '';
  domain = '';
  closed: Promise<number>;

  private constructor(
    readonly ws: WebSocket,
    readonly secure: boolean,
  ) {
    this.closed = new Promise((r) => ws.once('close', (code: number) => r(code)));
    ws.on('message', (data) => this.onFrame(data.toString()));
    ws.on('error', () => undefined);
  }

  static connect(url: string, opts: WsPhoneOptions = {}): Promise<WsSipPhone> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, opts.protocols ?? ['sip'], { ca: opts.ca });
      ws.once('open', () => resolve(new WsSipPhone(ws, url.startsWith('wss:'))));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake refused: ${res.statusCode}`)));
    });
  }

  get via(): string {
    return this.secure ? 'WSS' : 'WS';
  }
  get contact(): string {
    return `<sip:${this.user}@${this.host};transport=ws>`;
  }

  private onFrame(raw: string): void {
    if (raw === '\r\n') {
      this.deliver(parseSip('SIP/2.0 000 pong\r\n\r\n'));
      return;
    }
    const m = parseSip(raw);
    this.deliver(m);
  }

  private deliver(m: WsMessage): void {
    const i = this.waiters.findIndex((w) => w.match(m));
    if (i >= 0) {
      this.waiters.splice(i, 1)[0]!.resolve(m);
      return;
    }
    if (m.method) this.requests.push(m);
  }

  /** The next message that matches (queued requests first). */
  wait(match: (m: WsMessage) => boolean, timeoutMs = 5000, what = 'SIP message'): Promise<WsMessage> {
    const q = this.requests.findIndex(match);
    if (q >= 0) return Promise.resolve(this.requests.splice(q, 1)[0]!);
    return new Promise((resolve, reject) => {
      const w = {
        match,
        resolve: (m: WsMessage) => {
          clearTimeout(t);
          resolve(m);
        },
      };
      const t = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`timeout waiting for ${what}`));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  nextRequest(method: string, timeoutMs = 5000): Promise<WsMessage> {
    return this.wait((m) => m.method === method, timeoutMs, method);
  }

  send(text: string): void {
    this.ws.send(text);
  }

  /** Sends a request and resolves with its final response (provisional ones are passed to onProvisional). */
  async request(lines: string[], body = '', onProvisional?: (m: WsMessage) => void): Promise<WsMessage> {
    const branch = `z9hG4bK${tok()}`;
    const text = [lines[0], `Via: SIP/2.0/${this.via} ${this.host};branch=${branch};rport`, ...lines.slice(1), 'Max-Forwards: 70', `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n');
    const final = new Promise<WsMessage>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no final response to ${lines[0]}`)), 10_000);
      const loop = (): void => {
        void this.wait((m) => m.status !== undefined && (m.header('via') ?? '').includes(branch), 10_000).then((m) => {
          if (m.status! < 200) {
            onProvisional?.(m);
            loop();
            return;
          }
          clearTimeout(t);
          resolve(m);
        }, reject);
      };
      loop();
    });
    this.send(text);
    return final;
  }

  /** REGISTER with digest; resolves with the final response. */
  async register(user: string, domain: string, password: string, expires = 600): Promise<WsMessage> {
    this.user = user;
    this.domain = domain;
    const callId = `wsreg-${tok()}`;
    const base = (extra: string[]) => [
      `REGISTER sip:${domain} SIP/2.0`,
      `From: <sip:${user}@${domain}>;tag=${tok()}`,
      `To: <sip:${user}@${domain}>`,
      `Call-ID: ${callId}`,
      `CSeq: ${++this.cseq} REGISTER`,
      `Contact: ${this.contact};expires=${expires}`,
      ...extra,
    ];
    const first = await this.request(base([]));
    if (first.status !== 401) return first;
    const chal =
      first.headers
        .filter(([k]) => k === 'www-authenticate')
        .map(([, v]) => v)
        .find((v) => /MD5/i.test(v)) ?? first.header('www-authenticate')!;
    return this.request(base([authorization(chal, user, password, `sip:${domain}`).replace(/\r\n$/, '')]));
  }

  /** An INVITE (digest on 407) to `uri`; on 2xx the ACK is sent. Resolves with the final response and the dialog. */
  async invite(uri: string, sdp: string, password?: string): Promise<{ res: WsMessage; bye: () => Promise<WsMessage> }> {
    const callId = `wsinv-${tok()}`;
    const fromTag = tok();
    const inv = (extra: string[]) => [
      `INVITE ${uri} SIP/2.0`,
      `From: <sip:${this.user}@${this.domain}>;tag=${fromTag}`,
      `To: <${uri}>`,
      `Call-ID: ${callId}`,
      `CSeq: ${++this.cseq} INVITE`,
      `Contact: ${this.contact}`,
      'Content-Type: application/sdp',
      ...extra,
    ];
    let res = await this.request(inv([]), sdp);
    if (res.status === 407 && password) {
      this.ackNon2xx(res, uri, callId, fromTag);
      const chal = res.headers
        .filter(([k]) => k === 'proxy-authenticate')
        .map(([, v]) => v)
        .find((v) => /MD5/i.test(v))!;
      res = await this.request(inv([authorization(chal, this.user, password, uri, false, 'INVITE').replace(/^Authorization/, 'Proxy-Authorization')]), sdp);
    }
    if (res.status! >= 300) this.ackNon2xx(res, uri, callId, fromTag);
    const to = res.header('to')!;
    const target = /<([^>]+)>/.exec(res.header('contact') ?? '')?.[1] ?? uri;
    // the route set: the answer's Record-Route, reversed (RFC 3261 12.1.2; empty without an edge)
    const routes = res.headers
      .filter(([k]) => k === 'record-route')
      .flatMap(([, v]) => v.split(/,(?=\s*<)/).map((r) => r.trim()))
      .reverse();
    const inDialog = (method: string, seq: number) => [
      `${method} ${target} SIP/2.0`,
      `From: <sip:${this.user}@${this.domain}>;tag=${fromTag}`,
      `To: ${to}`,
      `Call-ID: ${callId}`,
      `CSeq: ${seq} ${method}`,
      ...(routes.length ? [`Route: ${routes.join(', ')}`] : []),
    ];
    if (res.status! < 300) {
      const ackSeq = this.cseq;
      this.send(
        [
          ...inDialog('ACK', ackSeq).slice(0, 1),
          `Via: SIP/2.0/${this.via} ${this.host};branch=z9hG4bK${tok()}`,
          ...inDialog('ACK', ackSeq).slice(1),
          'Max-Forwards: 70',
          'Content-Length: 0',
          '',
          '',
        ].join('\r\n'),
      );
    }
    return { res, bye: () => this.request(inDialog('BYE', ++this.cseq)) };
  }

  private ackNon2xx(res: WsMessage, uri: string, callId: string, fromTag: string): void {
    const via = res.header('via')!;
    this.send(
      [
        `ACK ${uri} SIP/2.0`,
        `Via: ${via}`,
        `From: <sip:${this.user}@${this.domain}>;tag=${fromTag}`,
        `To: ${res.header('to')}`,
        `Call-ID: ${callId}`,
        `CSeq: ${res.header('cseq')!.split(' ')[0]} ACK`,
        'Max-Forwards: 70',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
    );
  }

  /** Answer a received request (copying its dialog headers); a To tag is added to dialog-creating answers. */
  respond(req: WsMessage, status: number, reason: string, body = '', toTag = tok()): void {
    const to = req.header('to')!;
    const lines = [
      `SIP/2.0 ${status} ${reason}`,
      ...req.headers.filter(([k]) => k === 'via').map(([, v]) => `Via: ${v}`),
      `From: ${req.header('from')}`,
      `To: ${/;tag=/.test(to) || status === 100 ? to : `${to};tag=${toTag}`}`,
      `Call-ID: ${req.header('call-id')}`,
      `CSeq: ${req.header('cseq')}`,
      // RFC 3261 12.1.1: the Record-Route of a dialog-creating request is copied into the answer (an edge on the path)
      ...(req.method === 'INVITE' && status > 100 ? req.headers.filter(([k]) => k === 'record-route').map(([, v]) => `Record-Route: ${v}`) : []),
    ];
    if (req.method === 'INVITE' && status < 300 && status > 100) lines.push(`Contact: ${this.contact}`);
    if (body) lines.push('Content-Type: application/sdp');
    this.send([...lines, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n'));
  }

  close(): Promise<number> {
    this.ws.close();
    return this.closed;
  }
}

/** A plain RTP offer/answer at a loopback port (the far end may send to it; nothing needs to listen). */
export { plainSdp } from '../../testkit/srtp-far-end';
