/**
 * MEDIA_SERVER, parsed once (media-app/media-server/README.md; here, on kit's floor, as config.ts reads it): unset or empty, the embedded engine
 * (media-engine/ in this process); `freeswitch://host:port?password=…`, a FreeSWITCH (or our esl/
 * switch) driven through drachtio-fsmrf over its event socket. The password is never shown: a bad
 * value is reported by its problem alone.
 */
import { classifyIp, ipLiteral, isLocalhostName } from '../../core/net/address';

export type MediaServerSetting = { kind: 'embedded' } | { kind: 'freeswitch'; host: string; port: number; password: string };

/** FreeSWITCH's own default event-socket password, as fsmrf assumes it when none is given. */
export const DEFAULT_ESL_PASSWORD = 'ClueCon';

/** The setting, or the problem with the value (a sentence that never quotes the value: it may hold the password). */
export function parseMediaServer(raw: string | undefined): MediaServerSetting | { problem: string } {
  if (raw === undefined || raw.trim() === '') return { kind: 'embedded' };
  // a '#' starts the URL's fragment: the rest of a password would be cut off silently
  if (raw.includes('#')) return { problem: 'a # starts a URL fragment: percent-encode # in the password as %23' };
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { problem: 'must be freeswitch://host:port?password=… (or unset for the embedded engine)' };
  }
  if (url.protocol !== 'freeswitch:') return { problem: `scheme must be freeswitch:// (not ${url.protocol.replace(/:$/, '').slice(0, 20)}://)` };
  if (!url.hostname) return { problem: 'must name the event socket host: freeswitch://host:port' };
  if (url.username || url.password) return { problem: 'give the password as ?password=…, not in the address' };
  if (!url.port) return { problem: 'must name the event socket port: freeswitch://host:port' };
  if (url.pathname && url.pathname !== '/') return { problem: 'takes no path: freeswitch://host:port?password=…' };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const password = queryPassword(url.search);
  if (password !== null && typeof password === 'object') return password;
  // fsmrf's outbound-socket server (where the switch connects back for each channel) listens on loopback only
  if (!isLoopback(host))
    return { problem: `the switch must be on this host (127.0.0.1, ::1 or localhost): the channels' outbound sockets connect back to a loopback-only listener (media-app/media-server/README.md)` };
  return { kind: 'freeswitch', host, port: Number(url.port), password: password ?? DEFAULT_ESL_PASSWORD };
}

/**
 * The password of the query, percent-decoded (a literal `+` stays `+`: this is not a form), or null when
 * absent; a problem for anything else. No part of the query is ever quoted: any of it may be the password.
 */
function queryPassword(search: string): string | null | { problem: string } {
  if (search === '' || search === '?') return null;
  let password: string | null = null;
  for (const part of search.slice(1).split('&')) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    if (key !== 'password') return { problem: 'takes only ?password=… (percent-encode & in the password as %26)' };
    if (password !== null) return { problem: 'password given twice (percent-encode & in the password as %26)' };
    try {
      password = decodeURIComponent(eq < 0 ? '' : part.slice(eq + 1));
    } catch {
      return { problem: 'the password is not valid percent-encoding (write % as %25)' };
    }
    if (password === '') return { problem: 'password must not be empty' };
  }
  return password;
}

/** Loopback literals (127/8, ::1, their mapped forms) and the names that always mean this host. */
function isLoopback(host: string): boolean {
  const ip = ipLiteral(host);
  return ip ? classifyIp(ip) === 'loopback' : isLocalhostName(host);
}

/** What a log line may show of the setting (never the password). */
export function describeMediaServer(s: MediaServerSetting): string {
  return s.kind === 'embedded' ? 'embedded' : `freeswitch://${s.host.includes(':') ? `[${s.host}]` : s.host}:${s.port}`;
}
