/**
 * MEDIA_SERVER, parsed once (media-app/media-server/README.md; here, on kit's floor, as config.ts reads it): unset or empty, the embedded engine
 * (media-engine/ in this process); `freeswitch://host:port?password=…`, a FreeSWITCH (or our esl/
 * switch) driven through drachtio-fsmrf over its event socket. The password is never shown: a bad
 * value is reported by its problem alone.
 */

export type MediaServerSetting = { kind: 'embedded' } | { kind: 'freeswitch'; host: string; port: number; password: string };

/** FreeSWITCH's own default event-socket password, as fsmrf assumes it when none is given. */
export const DEFAULT_ESL_PASSWORD = 'ClueCon';

/** The setting, or the problem with the value (a sentence that never quotes the value: it may hold the password). */
export function parseMediaServer(raw: string | undefined): MediaServerSetting | { problem: string } {
  if (raw === undefined || raw.trim() === '') return { kind: 'embedded' };
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
  const unknown = [...url.searchParams.keys()].filter((k) => k !== 'password');
  if (unknown.length) return { problem: `unknown parameter ${unknown[0].slice(0, 30)} (only password)` };
  const password = url.searchParams.get('password');
  if (password === '') return { problem: 'password must not be empty' };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { kind: 'freeswitch', host, port: Number(url.port), password: password ?? DEFAULT_ESL_PASSWORD };
}

/** What a log line may show of the setting (never the password). */
export function describeMediaServer(s: MediaServerSetting): string {
  return s.kind === 'embedded' ? 'embedded' : `freeswitch://${s.host.includes(':') ? `[${s.host}]` : s.host}:${s.port}`;
}
