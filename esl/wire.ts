/**
 * FreeSWITCH's event-socket wire (mod_event_socket), as pure functions: no sockets here (server.ts
 * and listener.ts run them). Lines end in a bare LF; a blank line ends a header block; a body follows
 * only when a `Content-Length` header (bytes) says so.
 *
 * - From a client: a command frame, `<command line>\n[Name: value\n]*\n[body of Content-Length bytes]`
 *   (`CommandReader`). Header values of a command are raw (modesl writes them so, FreeSWITCH reads them so).
 * - To a client: `auth/request`, `command/reply` (`Reply-Text: +OK …` / `-ERR …`), `api/response`,
 *   `text/event-plain` (header values URL-encoded) and `text/event-json`, `text/disconnect-notice`,
 *   `text/rude-rejection`. Byte for byte as mod_event_socket writes them (esl/README.md, "The wire").
 */

/** A header block longer than this without its blank line is refused (FreeSWITCH's own cap is 10 MB). */
export const MAX_HEADER_BYTES = 64 * 1024;
/** A command body longer than this is refused (a sendmsg's text, a sendevent's body). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** One command from a client: its first line, its headers in order, its body if it had one. */
export interface CommandFrame {
  command: string;
  headers: [string, string][];
  body?: string;
}

/** Input no frame can be made of; the connection answers `-ERR command parse error.` and closes. */
export class WireError extends Error {}

const LF = 0x0a;
const CR = 0x0d;

/** The value of a frame's header, by case-insensitive name (FreeSWITCH's header lookup ignores case). */
export function frameHeader(frame: CommandFrame, name: string): string | undefined {
  const n = name.toLowerCase();
  return frame.headers.find(([k]) => k.toLowerCase() === n)?.[1];
}

/**
 * Turns the bytes of one connection into command frames, whatever their split into reads. As
 * FreeSWITCH's read_packet: CR is ignored in the count of line ends, blank lines before a command are
 * skipped, a header line is `name:value` with the spaces after the colon dropped, and `Content-Length`
 * names the bytes of body that follow the blank line.
 */
export class CommandReader {
  private buf: Buffer = Buffer.alloc(0);
  private pending: { command: string; headers: [string, string][]; length: number } | null = null;

  /** Every frame the bytes so far complete; throws WireError on input that cannot be a frame. */
  push(chunk: Buffer): CommandFrame[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: CommandFrame[] = [];
    for (;;) {
      if (this.pending) {
        if (this.buf.length < this.pending.length) return out;
        const { command, headers, length } = this.pending;
        out.push({ command, headers, body: this.buf.toString('utf8', 0, length) });
        this.buf = this.buf.subarray(length);
        this.pending = null;
        continue;
      }
      this.skipLeadingLineEnds();
      const end = headerEnd(this.buf);
      if (!end) {
        if (this.buf.length > MAX_HEADER_BYTES) throw new WireError(`a header block of more than ${MAX_HEADER_BYTES} bytes`);
        return out;
      }
      const block = this.buf.toString('utf8', 0, end.start);
      this.buf = this.buf.subarray(end.next);
      const frame = parseBlock(block);
      const length = contentLength(frame);
      if (length > 0) this.pending = { ...frame, length };
      else out.push(frame);
    }
  }

  private skipLeadingLineEnds(): void {
    let i = 0;
    while (i < this.buf.length && (this.buf[i] === LF || this.buf[i] === CR)) i++;
    if (i) this.buf = this.buf.subarray(i);
  }
}

/** Where the header block ends: the first run of two LF (CRs between them ignored). */
function headerEnd(buf: Buffer): { start: number; next: number } | null {
  let lfs = 0;
  let first = -1;
  for (let i = 0; i < buf.length && i <= MAX_HEADER_BYTES; i++) {
    const b = buf[i];
    if (b === LF) {
      if (lfs === 0) first = i;
      if (++lfs === 2) return { start: first, next: i + 1 };
    } else if (b !== CR) lfs = 0;
  }
  return null;
}

function parseBlock(block: string): { command: string; headers: [string, string][] } {
  const lines = block.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  const command = lines[0]!;
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    if (!line) continue;
    const colon = line.indexOf(':');
    if (colon < 0) continue; // FreeSWITCH drops a line without a colon
    headers.push([line.slice(0, colon), line.slice(colon + 1).replace(/^ +/, '')]);
  }
  return { command, headers };
}

function contentLength(frame: { headers: [string, string][] }): number {
  const v = frame.headers.find(([k]) => k.toLowerCase() === 'content-length')?.[1];
  if (v === undefined) return 0;
  if (!/^\d+$/.test(v.trim())) throw new WireError('a Content-Length that is not a number');
  const n = Number(v.trim());
  if (n > MAX_BODY_BYTES) throw new WireError(`a body of more than ${MAX_BODY_BYTES} bytes`);
  return n;
}

/** What a connection sees first: the server wants `auth <password>`. */
export function authRequest(): string {
  return 'Content-Type: auth/request\n\n';
}

/** A command's reply: `Reply-Text: +OK …` or `-ERR …`, written as is (not URL-encoded), as FreeSWITCH does. */
export function commandReply(text: string, extra: [string, string][] = []): string {
  return `Content-Type: command/reply\nReply-Text: ${text}\n${extra.map(([k, v]) => `${k}: ${v}\n`).join('')}\n`;
}

/** An `api` command's answer: the command's output as the body (an empty output is `-ERR no reply\n`). */
export function apiResponse(body: string): string {
  const text = body === '' ? '-ERR no reply\n' : body;
  return `Content-Type: api/response\nContent-Length: ${Buffer.byteLength(text)}\n\n${text}`;
}

/** The notice sent before the server closes a connection (inbound form: no channel is controlled). */
export const GOODBYE = 'Disconnected, goodbye.\nSee you at ClueCon! http://www.cluecon.com/\n';

export function disconnectNotice(message = GOODBYE): string {
  return `Content-Type: text/disconnect-notice\nContent-Length: ${Buffer.byteLength(message)}\n\n${message}`;
}

/** What a refused address gets before its connection closes (FreeSWITCH's ACL refusal; fsmrf reports `acl-error`). */
export const ACCESS_DENIED = 'Access Denied, go away.\n';

export function rudeRejection(message = ACCESS_DENIED): string {
  return `Content-Type: text/rude-rejection\nContent-Length: ${Buffer.byteLength(message)}\n\n${message}`;
}

/** An event: Event-Name and its other headers in order, and a body if it has one. */
export interface EslEvent {
  headers: [string, string][];
  body?: string;
}

/** The value of an event's header, by case-insensitive name. */
export function eventHeader(ev: EslEvent, name: string): string | undefined {
  const n = name.toLowerCase();
  return ev.headers.find(([k]) => k.toLowerCase() === n)?.[1];
}

/**
 * A header value as FreeSWITCH's plain events carry it: every byte outside printable ASCII and each of
 * `\r\n #%&+:;<=>?@[\]^`{|}"` as %XX (upper-case hex). `%` is always encoded, so the client's
 * decodeURIComponent gives the value back exactly (FreeSWITCH 1.10 leaves an existing `%XX` alone).
 */
export function urlEncode(value: string): string {
  let out = '';
  for (const b of Buffer.from(value, 'utf8')) {
    out += b < 0x20 || b > 0x7e || UNSAFE.has(b) ? `%${b.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(b);
  }
  return out;
}
const UNSAFE = new Set(Buffer.from('\r\n #%&+:;<=>?@[\\]^`{|}"', 'latin1'));

/** An event's plain serialization (switch_event_serialize with encoding): `name: value\n` each, then the body. */
export function serializePlain(ev: EslEvent): string {
  let s = '';
  for (const [k, v] of ev.headers) s += `${k}: ${v === '' ? '_undef_' : urlEncode(v)}\n`;
  if (ev.body) return `${s}Content-Length: ${Buffer.byteLength(ev.body)}\n\n${ev.body}`;
  return `${s}\n`;
}

/** An event's JSON serialization: one object of headers, then `Content-Length` and `_body` when it has a body. */
export function serializeJson(ev: EslEvent): string {
  const o: Record<string, string> = {};
  for (const [k, v] of ev.headers) o[k] = v;
  if (ev.body) {
    o['Content-Length'] = String(Buffer.byteLength(ev.body));
    o._body = ev.body;
  }
  return JSON.stringify(o);
}

export type EventFormat = 'plain' | 'json';

/** An event as sent to a subscribed client in its format. */
export function eventFrame(ev: EslEvent, format: EventFormat): string {
  const text = format === 'json' ? serializeJson(ev) : serializePlain(ev);
  return `Content-Length: ${Buffer.byteLength(text)}\nContent-Type: text/event-${format}\n\n${text}`;
}

/**
 * The outbound socket's answer to `connect`: the channel's CHANNEL_DATA event serialized as one header
 * block, with the reply's own headers among the event's (FreeSWITCH adds them to the event before it
 * serializes it, so `Reply-Text: +OK\n` goes out as `%2BOK%0A`; clients URL-decode every value).
 */
export function connectReply(channelData: EslEvent, control: 'full' | 'single-channel'): string {
  return serializePlain({
    headers: [...channelData.headers, ['Content-Type', 'command/reply'], ['Reply-Text', '+OK\n'], ['Socket-Mode', 'async'], ['Control', control]],
  });
}

/** The goodbye of an outbound socket, naming the channel it controlled. */
export function sessionDisconnectNotice(uuid: string, message = GOODBYE): string {
  return `Content-Type: text/disconnect-notice\nControlled-Session-UUID: ${uuid}\nContent-Disposition: disconnect\nContent-Length: ${Buffer.byteLength(message)}\n\n${message}`;
}

/** What a lingering outbound socket gets when its channel hangs up (the socket stays open for the last events). */
export function lingerNotice(uuid: string, channelName: string, lingerSeconds: number): string {
  return `Content-Type: text/disconnect-notice\nControlled-Session-UUID: ${uuid}\nContent-Disposition: linger\nChannel-Name: ${channelName}\nLinger-Time: ${lingerSeconds}\nContent-Length: 0\n\n`;
}
