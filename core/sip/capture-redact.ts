/**
 * What the SIP capture (a call's ladder and pcap) must not keep: the digest exchange that would let
 * a reader replay an answer or crack a password offline, and the SRTP keys of the call.
 *
 * - Authorization, Proxy-Authorization (credentials), WWW-Authenticate, Proxy-Authenticate
 *   (challenges), Authentication-Info, Proxy-Authentication-Info: the values of nonce, cnonce,
 *   response, opaque, nextnonce and rspauth are blanked; the scheme, username, realm, uri,
 *   algorithm, qop and nc stay (who authenticated how is what a ladder is read for). A scheme other
 *   than Digest keeps its name only.
 * - SDP `a=crypto` (RFC 4568): each `inline:` key and salt is blanked; `a=key-mgmt` (RFC 4567): its
 *   key data is blanked.
 *
 * Every blanked character becomes `*`, so each message keeps its length: its Content-Length stays
 * true and the pcap's packet lengths match (headers in a message/sipfrag body included). Bytes go
 * through latin1, one character per byte, so no body byte changes but the blanked ones.
 */

/** A line that may hold something to blank (cheap test: a message with none is returned as it is). */
const CANDIDATE = /\n(?:proxy-|www-)?auth|\na=(?:crypto|key-mgmt):/i;

const AUTH_HEADER = /^((?:proxy-)?authorization|www-authenticate|proxy-authenticate|(?:proxy-)?authentication-info)([ \t]*:)([^\r\n]*(?:\r?\n[ \t][^\r\n]*)*)/gim;
const SECRET_PARAM = /(\b(?:nonce|cnonce|response|opaque|nextnonce|rspauth)[ \t]*=[ \t]*)("(?:[^"\\\r\n]|\\.)*"|[^\s,]+)/gi;
const CRYPTO_LINE = /^a=crypto:[^\r\n]*/gim;
const INLINE_KEY = /(inline:)([^|;\s]+)/gi;
const KEY_MGMT = /^(a=key-mgmt:[ \t]*\S+[ \t]+)(\S+)/gim;

const blank = (s: string): string => '*'.repeat(s.length);
/** A quoted value keeps its quotes. */
const blankValue = (v: string): string => (v.startsWith('"') && v.endsWith('"') && v.length >= 2 ? `"${blank(v.slice(1, -1))}"` : blank(v));

function redactAuthValue(name: string, value: string): string {
  const lower = name.toLowerCase();
  if (!lower.endsWith('-info')) {
    const m = /^([ \t]*)(\S+)([\s\S]*)$/.exec(value);
    if (m && m[2]!.toLowerCase() !== 'digest') return `${m[1]}${m[2]}${m[3]!.replace(/[^\s]/g, '*')}`;
  }
  return value.replace(SECRET_PARAM, (_, head: string, v: string) => head + blankValue(v));
}

/** The SIP message text with its credentials and keys blanked (the same text when it has none). */
export function redactSipText(text: string): string {
  if (!CANDIDATE.test(text)) return text;
  return text
    .replace(AUTH_HEADER, (_, name: string, colon: string, value: string) => name + colon + redactAuthValue(name, value))
    .replace(CRYPTO_LINE, (line) => line.replace(INLINE_KEY, (__, head: string, key: string) => head + blank(key)))
    .replace(KEY_MGMT, (_, head: string, data: string) => head + blank(data));
}

/** The same over the bytes as sent or received (the buffer itself when nothing is blanked). */
export function redactSipBytes(raw: Buffer): Buffer {
  const text = raw.toString('latin1');
  const out = redactSipText(text);
  return out === text ? raw : Buffer.from(out, 'latin1');
}
