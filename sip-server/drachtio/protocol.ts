/**
 * drachtio message forms (the payload inside a frame). Every message starts with a message id and
 * a type, '|'-separated; an optional SIP message follows the first CRLF.
 *
 * application -> server
 *   <id>|authenticate|<secret>|<tag,tag>
 *   <id>|route|<method>            <id>|remove_route|<method>            <id>|ping
 *   <id>|sip|<txnId>|<dialogId>[|<routeUrl>]\r\n<SIP message>
 *   <id>|proxy|<txnId>|[remainInDialog]|[fullResponse]|[followRedirects]|simultaneous|serial|
 *        <provisionalTimeout>|<finalTimeout>|<dest>[|<dest>...]\r\n<SIP request line + headers>
 * server -> application
 *   <uuid>|response|<id>|OK|<details...>   or   <uuid>|response|<id>|NO|<reason>
 *   <uuid>|sip|<source>|<bytes>|<proto>|<addr>|<port>|<time>|<txnId>|<dialogId>|[<recvAddr>|<recvPort>|]\r\n<SIP>
 *   <uuid>|cdr:attempt|<source>|<time>\r\n<SIP>   (cdr:start adds |<role>, cdr:stop adds |<reason>)
 */
import { randomUUID } from 'node:crypto';

export const CRLF = '\r\n';

export interface ClientMessage {
  id: string;
  type: string;
  /** all '|'-separated tokens of the first line, empty ones kept (proxy relies on positions) */
  tokens: string[];
  /** the SIP message text after the first CRLF ('' when none) */
  sip: string;
}

export function parseClientMessage(payload: string): ClientMessage {
  const eol = payload.indexOf(CRLF);
  const leader = eol < 0 ? payload : payload.slice(0, eol);
  const tokens = leader.split('|');
  return { id: tokens[0] ?? '', type: tokens[1] ?? '', tokens, sip: eol < 0 ? '' : payload.slice(eol + 2) };
}

/** Transport facts about one SIP message, as drachtio-server reports them (SipMsgData_t). */
export interface MsgMeta {
  source: 'network' | 'application';
  bytes: number;
  protocol: string; // udp | tcp | tls | ws | wss
  address: string;
  port: number;
  time?: string;
}

/** HH:MM:SS.uuuuuu in UTC, the server's clock format. */
export function stackTime(now = Date.now()): string {
  const d = new Date(now);
  const p2 = (n: number) => String(n).padStart(2, '0');
  const micros = String((now % 1000) * 1000).padStart(6, '0');
  return `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}.${micros}`;
}

export function metaTokens(m: MsgMeta): string {
  return `${m.source}|${m.bytes}|${m.protocol}|${m.address}|${m.port}|${m.time ?? stackTime()}`;
}

export function responseOk(clientMsgId: string, ...details: string[]): string {
  return [randomUUID(), 'response', clientMsgId, 'OK', ...details].join('|');
}

export function responseNo(clientMsgId: string, reason: string): string {
  return [randomUUID(), 'response', clientMsgId, 'NO', reason].join('|');
}

/** The `Msg sent:` echo of a request the application asked us to send. */
export function requestSentEcho(clientMsgId: string, meta: MsgMeta, txnId: string, raw: string): string {
  return `${responseOk(clientMsgId, metaTokens(meta), txnId, 'Msg sent:', '')}${CRLF}${raw}`;
}

/** The `Msg sent:` echo of a response the application asked us to send (carries the dialog id). */
export function responseSentEcho(clientMsgId: string, meta: MsgMeta, txnId: string, dialogId: string, raw: string): string {
  return `${responseOk(clientMsgId, metaTokens(meta), txnId, dialogId, '', 'Msg sent:', '')}${CRLF}${raw}`;
}

/** One response received on a proxied branch (`continue` keeps the app's callback alive). */
export function proxyResponseEcho(clientMsgId: string, meta: MsgMeta, raw: string): string {
  return `${responseOk(clientMsgId, metaTokens(meta), '', '', 'continue')}${CRLF}${raw}`;
}

export function sipToClient(meta: MsgMeta, txnId: string, dialogId: string, raw: string, receivedOn?: { address: string; port: number }): string {
  let leader = `${randomUUID()}|sip|${metaTokens(meta)}|${txnId}|${dialogId}|`;
  if (receivedOn) leader += `${receivedOn.address}|${receivedOn.port}|`;
  return `${leader}${CRLF}${raw}`;
}

export type CdrType = 'attempt' | 'start' | 'stop';

export function cdrToClient(type: CdrType, source: string, extra: string | undefined, raw: string): string {
  const parts = [randomUUID(), `cdr:${type}`, source, stackTime()];
  if (extra !== undefined) parts.push(extra);
  return `${parts.join('|')}${CRLF}${raw}`;
}
