/**
 * Parsing of the SIP text an application sends inside `sip|` and `proxy|` messages. Unlike a
 * network message it is a template: mandatory headers may be missing (the server fills them in),
 * Content-Length may be absent or count characters, header names come lower-cased from srf.
 */
import { Headers, canonicalName } from '../message/headers';

export interface AppRequestTemplate {
  kind: 'request';
  method: string;
  uri: string;
  headers: Headers;
  body: string;
}

export interface AppResponseTemplate {
  kind: 'response';
  status: number;
  reason: string;
  headers: Headers;
  body: string;
}

export type AppTemplate = AppRequestTemplate | AppResponseTemplate;

export class AppMessageError extends Error {}

/** Headers the server always computes itself; values sent by the application are dropped. */
const SERVER_OWNED = new Set(['content-length', 'via']);

export function parseAppMessage(text: string): AppTemplate {
  const sep = text.indexOf('\r\n\r\n');
  let head: string;
  let body: string;
  if (sep < 0) {
    head = text.replace(/\r\n$/, '');
    body = '';
  } else {
    head = text.slice(0, sep);
    body = text.slice(sep + 4);
  }
  const lines = head.split('\r\n');
  const start = lines.shift() ?? '';
  const headers = new Headers();
  let name = '';
  let value = '';
  const flush = () => {
    if (!name) return;
    const canon = canonicalName(name);
    const key = canon.toLowerCase();
    if (!SERVER_OWNED.has(key)) {
      headers.append(canon, value.trim());
    }
    name = '';
  };
  for (const line of lines) {
    if (!line) continue;
    if (line[0] === ' ' || line[0] === '\t') {
      value += ' ' + line.trim();
      continue;
    }
    flush();
    const colon = line.indexOf(':');
    if (colon <= 0) throw new AppMessageError(`malformed header line: ${line}`);
    name = line.slice(0, colon).trim();
    value = line.slice(colon + 1);
  }
  flush();
  const resp = /^SIP\/2\.0\s+(\d{3})(?:\s+(.*))?$/.exec(start);
  if (resp) {
    return { kind: 'response', status: Number(resp[1]), reason: (resp[2] ?? '').trim(), headers, body };
  }
  const req = /^([A-Za-z]+)\s+(\S+)\s+SIP\/2\.0$/.exec(start);
  if (!req) throw new AppMessageError(`invalid start line: ${start}`);
  return { kind: 'request', method: req[1].toUpperCase(), uri: req[2], headers, body };
}
