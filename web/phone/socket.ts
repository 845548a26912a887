/**
 * The SIP WebSocket for JsSIP, with one repair: JsSIP 3.x answers only MD5 digest challenges and
 * reads just one WWW-/Proxy-Authenticate line of a 401/407, while the platform offers one line per
 * algorithm (RFC 8760, e.g. MD5 and SHA-256). Challenges in other algorithms are taken out of
 * incoming 401/407 responses before JsSIP parses them, so it answers the MD5 one. Everything else
 * passes through untouched.
 */
import * as JsSIP from 'jssip';

const CHALLENGE = /^(WWW-Authenticate|Proxy-Authenticate)\s*:(.*)$/i;

/** A 401/407 without the challenges JsSIP cannot answer (kept as is when none would remain). */
export function md5ChallengesOnly(message: string): string {
  if (!/^SIP\/2\.0 40[17] /.test(message)) return message;
  const head = message.split('\r\n\r\n')[0]!;
  const lines = head.split('\r\n');
  const challenges = lines.filter((l) => CHALLENGE.test(l));
  const md5 = challenges.filter((l) => {
    const alg = /algorithm\s*=\s*"?([A-Za-z0-9-]+)/i.exec(l);
    return !alg || alg[1]!.toUpperCase() === 'MD5';
  });
  if (!md5.length || md5.length === challenges.length) return message;
  const kept = lines.filter((l) => !CHALLENGE.test(l) || md5.includes(l));
  return kept.join('\r\n') + message.slice(head.length);
}

export class SipWebSocket implements JsSIP.Socket {
  private readonly inner: JsSIP.WebSocketInterface;
  // JsSIP's transport assigns these
  onconnect: () => void = () => undefined;
  ondisconnect: (error: boolean, code?: number, reason?: string) => void = () => undefined;
  ondata: <T>(event: T) => void = () => undefined;

  constructor(url: string) {
    this.inner = new JsSIP.WebSocketInterface(url);
    this.inner.onconnect = () => this.onconnect();
    this.inner.ondisconnect = (error: boolean, code?: number, reason?: string) => this.ondisconnect(error, code, reason);
    this.inner.ondata = <T>(data: T) => (typeof data === 'string' ? this.ondata(md5ChallengesOnly(data)) : this.ondata(data));
  }

  get via_transport(): string {
    return this.inner.via_transport;
  }
  set via_transport(v: string) {
    this.inner.via_transport = v;
  }
  get url(): string {
    return this.inner.url;
  }
  get sip_uri(): string {
    return this.inner.sip_uri;
  }
  connect(): void {
    this.inner.connect();
  }
  disconnect(): void {
    this.inner.disconnect();
  }
  send(message: string | ArrayBufferLike | Blob | ArrayBufferView): boolean {
    return this.inner.send(message);
  }
  isConnected(): boolean {
    return this.inner.isConnected();
  }
  isConnecting(): boolean {
    return this.inner.isConnecting();
  }
}
