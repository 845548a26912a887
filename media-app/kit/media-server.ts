/**
 * MEDIA_SERVER, parsed once (media-app/media-server/README.md; here, on kit's floor, as config.ts reads it): unset or empty, the embedded engine
 * (media-engine/ in this process); `freeswitch://host:port?password=…&listen=…&advertise=…`, a FreeSWITCH
 * (or our esl/ switch) driven through drachtio-fsmrf over its event socket, fsmrf's outbound-socket
 * listener where `listen` says (media-server-outbound.ts). The password is never shown: a bad value is
 * reported by its problem alone.
 */
import { classifyIp, ipLiteral, isLocalhostName } from '../../core/net/address';
import { outboundSetting, type HostPort } from './media-server-outbound';

export type { HostPort } from './media-server-outbound';

export type MediaServerSetting =
  | { kind: 'embedded' }
  | {
      kind: 'freeswitch';
      host: string;
      port: number;
      password: string;
      /** where fsmrf's outbound-socket server listens (absent: 127.0.0.1, any port) */
      listen?: HostPort;
      /** what the switch is told to dial (X-esl-outbound; absent: the listen address and port) */
      advertise?: HostPort;
    };

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
  if (ipLiteral(host) && classifyIp(ipLiteral(host)) === 'unspecified') return { problem: 'the event socket host must be an address to dial, not a wildcard (0.0.0.0, ::)' };
  const query = queryParams(url.search);
  if ('problem' in query) return query;
  const password = query.password ?? null;
  if (password === '') return { problem: 'password must not be empty' };
  const outbound = outboundSetting(query.listen, query.advertise, isLoopback(host));
  if ('problem' in outbound) return outbound;
  return { kind: 'freeswitch', host, port: Number(url.port), password: password ?? DEFAULT_ESL_PASSWORD, ...outbound };
}

const PARAMS = ['password', 'listen', 'advertise'] as const;
type Param = (typeof PARAMS)[number];

/**
 * The query's parameters, each percent-decoded (a literal `+` stays `+`: this is not a form) and given at
 * most once; a problem for anything else. No part of the query is ever quoted: any of it may be the
 * password (an unencoded `&` in it makes the rest look like another parameter).
 */
function queryParams(search: string): Partial<Record<Param, string>> | { problem: string } {
  const out: Partial<Record<Param, string>> = {};
  if (search === '' || search === '?') return out;
  for (const part of search.slice(1).split('&')) {
    const eq = part.indexOf('=');
    const key = (eq < 0 ? part : part.slice(0, eq)) as Param;
    if (!PARAMS.includes(key)) return { problem: 'takes only ?password=…, listen=…, advertise=… (percent-encode & in the password as %26)' };
    if (out[key] !== undefined) return { problem: `${key} given twice (percent-encode & in the password as %26)` };
    try {
      out[key] = decodeURIComponent(eq < 0 ? '' : part.slice(eq + 1));
    } catch {
      return { problem: key === 'password' ? 'the password is not valid percent-encoding (write % as %25)' : `${key} is not valid percent-encoding` };
    }
  }
  return out;
}

/** Loopback literals (127/8, ::1, their mapped forms) and the names that always mean this host. */
function isLoopback(host: string): boolean {
  const ip = ipLiteral(host);
  return ip ? classifyIp(ip) === 'loopback' : isLocalhostName(host);
}

/** What a log line may show of the setting (never the password). */
export function describeMediaServer(s: MediaServerSetting): string {
  if (s.kind === 'embedded') return 'embedded';
  const at = (h: string) => (h.includes(':') ? `[${h}]` : h);
  const params = [
    ...(s.listen ? [`listen=${at(s.listen.host)}${s.listen.port ? `:${s.listen.port}` : ''}`] : []),
    ...(s.advertise ? [`advertise=${at(s.advertise.host)}${s.advertise.port ? `:${s.advertise.port}` : ''}`] : []),
  ];
  return `freeswitch://${at(s.host)}:${s.port}${params.length ? `?${params.join('&')}` : ''}`;
}
