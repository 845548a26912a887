// A raw SIP client bound to its own loopback address (testkit/reliability/sip/flood.ts and the
// security suites: lockout, digest replay, NAT floods): OPTIONS, REGISTER with and without digest,
// the replies parsed, their shape compared, and the stack's ban counter.
import { expect } from 'chai';
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { digestResponse, parseDigest, type DigestAlgorithm } from '../../../media-app/kit/sip-digest';
import { sipRegistry } from '../../../sip-server/metrics';

export interface Reply {
  status: number;
  reason: string;
  names: string[];
  headers: [string, string][];
  raw: string;
}

function parseReply(raw: string): Reply | null {
  const m = /^SIP\/2\.0 (\d{3}) ?([^\r\n]*)/.exec(raw);
  if (!m) return null;
  const headers = raw
    .split('\r\n\r\n')[0]!
    .split('\r\n')
    .slice(1)
    .map((l) => {
      const i = l.indexOf(':');
      return [l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim()] as [string, string];
    });
  return { status: Number(m[1]), reason: m[2]!, names: headers.map(([n]) => n), headers, raw };
}

export const header = (r: Reply, name: string): string | undefined => r.headers.find(([n]) => n === name)?.[1];

export class Peer {
  port = 0;
  private readonly sock = dgram.createSocket('udp4');
  private readonly waiting = new Map<string, (r: Reply) => void>();

  constructor(
    readonly host: string,
    private readonly target: number,
  ) {}

  async open(): Promise<this> {
    await new Promise<void>((r) => this.sock.bind(0, this.host, () => r()));
    this.port = this.sock.address().port;
    this.sock.on('message', (b) => {
      const r = parseReply(b.toString());
      if (!r || r.status < 200) return;
      const key = `${header(r, 'call-id')}|${header(r, 'cseq')}`;
      const w = this.waiting.get(key);
      if (w) {
        this.waiting.delete(key);
        w(r);
      }
    });
    return this;
  }

  send(text: string): Promise<void> {
    return new Promise((r) => this.sock.send(text, this.target, '127.0.0.1', () => r()));
  }

  /** Sends a request and resolves with its final response, retransmitting (T1 500 ms); null after timeoutMs. */
  async request(text: string, timeoutMs = 2500): Promise<Reply | null> {
    const callId = /\r\nCall-ID: ([^\r\n]+)/.exec(text)![1];
    const cseq = /\r\nCSeq: ([^\r\n]+)/.exec(text)![1];
    const key = `${callId}|${cseq}`;
    const reply = new Promise<Reply | null>((resolve) => {
      const t = setTimeout(() => {
        this.waiting.delete(key);
        resolve(null);
      }, timeoutMs);
      this.waiting.set(key, (r) => {
        clearTimeout(t);
        resolve(r);
      });
    });
    const resend = setInterval(() => void this.send(text), 500);
    await this.send(text);
    try {
      return await reply;
    } finally {
      clearInterval(resend);
    }
  }

  close(): void {
    this.sock.close();
  }
}

/** Peers a test opens on loopback addresses of its choice, closed together. */
export class Peers {
  private readonly all: Peer[] = [];
  constructor(private readonly sipPort: () => number) {}

  async open(host: string): Promise<Peer> {
    const p = await new Peer(host, this.sipPort()).open();
    this.all.push(p);
    return p;
  }

  close(): void {
    for (const p of this.all.splice(0)) p.close();
  }
}

export const token = (): string => randomBytes(6).toString('hex');

export function options(p: Peer, sipPort: number): string {
  const t = token();
  return [
    `OPTIONS sip:ping@127.0.0.1:${sipPort} SIP/2.0`,
    `Via: SIP/2.0/UDP ${p.host}:${p.port};branch=z9hG4bK${t};rport`,
    'Max-Forwards: 70',
    `From: <sip:probe@${p.host}>;tag=${t}`,
    `To: <sip:ping@127.0.0.1>`,
    `Call-ID: probe-${t}`,
    'CSeq: 1 OPTIONS',
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

/** One registration attempt as a phone makes it: REGISTER, the 401 challenge, REGISTER with credentials. */
export function registerAttempt(p: Peer, sipPort: number, user: string, domain: string, password: string): Promise<{ challenge: Reply | null; final: Reply | null }> {
  return digestAttempt(p, { method: 'REGISTER', user, domain, password });
}

/**
 * `n` REGISTERs of `user` with wrong passwords from `p`: every one is refused 403, and from the
 * `lockAfter`-th on each refusal carries a Retry-After of 1 to `lockSec` s (the source is locked out).
 */
export async function lockedOutByWrongRegisters(p: Peer, sipPort: number, user: string, domain: string, n: number, lockAfter: number, lockSec: number): Promise<void> {
  const finals: { status?: number; retryAfter?: string }[] = [];
  for (let i = 0; i < n; i++) {
    const a = await registerAttempt(p, sipPort, user, domain, `wrong-${i}`);
    finals.push({ status: a.final?.status, retryAfter: a.final ? header(a.final, 'retry-after') : undefined });
  }
  const ctx = JSON.stringify(finals);
  expect(
    finals.map((f) => f.status),
    ctx,
  ).to.deep.equal(finals.map(() => 403));
  for (const f of finals.slice(lockAfter - 1)) expect(Number(f.retryAfter), ctx).to.be.within(1, lockSec);
}

/**
 * One digest exchange as a phone makes it: the request, its challenge (REGISTER 401, INVITE 407),
 * the request with credentials (`auth`: the credentials it sent). INVITE finals are ACKed (same
 * branch, RFC 3261 17.1.1.3). With `o.replay`, one request (a new dialog) carrying those credentials
 * as they are, as an attacker replays a captured header.
 */
export async function digestAttempt(
  p: Peer,
  o: { method: 'REGISTER' | 'INVITE'; user: string; domain: string; password: string; target?: string; replay?: string },
): Promise<{ challenge: Reply | null; final: Reply | null; auth?: string }> {
  const invite = o.method === 'INVITE';
  const callId = `${invite ? 'inv' : 'reg'}-${token()}`;
  const tag = token();
  const ruri = invite ? `sip:${o.target ?? 'nobody'}@${o.domain}` : `sip:${o.domain}`;
  const to = invite ? ruri : `sip:${o.user}@${o.domain}`;
  const msg = (cseq: number, branch: string, auth?: string, method: string = o.method, toValue = `<${to}>`): string =>
    [
      `${method} ${ruri} SIP/2.0`,
      `Via: SIP/2.0/UDP ${p.host}:${p.port};branch=${branch};rport`,
      'Max-Forwards: 70',
      `From: <sip:${o.user}@${o.domain}>;tag=${tag}`,
      `To: ${toValue}`,
      `Call-ID: ${callId}`,
      `CSeq: ${cseq} ${method}`,
      `Contact: <sip:${o.user}@${p.host}:${p.port}>`,
      ...(invite ? [] : ['Expires: 60']),
      ...(auth ? [`${invite ? 'Proxy-Authorization' : 'Authorization'}: ${auth}`] : []),
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
  const send = async (cseq: number, auth?: string): Promise<Reply | null> => {
    const branch = `z9hG4bK${token()}`;
    const r = await p.request(msg(cseq, branch, auth));
    if (invite && r) await p.send(msg(cseq, branch, undefined, 'ACK', header(r, 'to')));
    return r;
  };
  if (o.replay) return { challenge: null, final: await send(1, o.replay) };
  const first = await send(1);
  if (!first || first.status !== (invite ? 407 : 401)) return { challenge: null, final: first };
  const ch = first.headers
    .filter(([n]) => n === (invite ? 'proxy-authenticate' : 'www-authenticate'))
    .map(([, v]) => parseDigest(v)!)
    .find((d) => d && /^(MD5|SHA-256)$/i.test(d.algorithm ?? 'MD5'))!;
  const algorithm = (ch.algorithm ?? 'MD5').toUpperCase() as DigestAlgorithm;
  const c = { username: o.user, realm: ch.realm!, nonce: ch.nonce!, uri: ruri, algorithm, qop: 'auth', nc: '00000001', cnonce: token() };
  const response = digestResponse(c, o.method, o.password);
  const auth = `Digest username="${o.user}", realm="${c.realm}", nonce="${c.nonce}", uri="${c.uri}", response="${response}", algorithm=${algorithm}, qop=auth, nc=${c.nc}, cnonce="${c.cnonce}"`;
  return { challenge: first, final: await send(2, auth), auth };
}

/** status, reason and header names of a reply, nonces and tags blanked: what may differ between two users. */
export function shape(r: Reply | null): string {
  if (!r) return 'none';
  const values = r.headers.filter(([n]) => ['www-authenticate', 'retry-after', 'content-length', 'server', 'warning'].includes(n)).map(([n, v]) => `${n}=${v.replace(/nonce="[^"]*"/, 'nonce="…"')}`);
  return `${r.status} ${r.reason} | ${r.names.join(',')} | ${values.join(' ; ')}`;
}

/** sip_bans_total so far (the registry is shared by every suite in the process: compare with an earlier value). */
export const bansSoFar = async (): Promise<number> => Number(/sip_bans_total (\d+)/.exec(await sipRegistry.getSingleMetricAsString('sip_bans_total'))?.[1] ?? 0);
