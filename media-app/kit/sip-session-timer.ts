/**
 * RFC 4028 session timers: what is agreed on a dialog (the interval, who refreshes), from an INVITE we
 * answer or the 2xx to one we sent, and the headers that say so. Pure functions: call/session-timer.ts runs
 * the timers, outbound/uac.ts offers them on our INVITEs, the 422 check below refuses a too-short one.
 *
 * As UAS: an offered Session-Expires is honoured as it is (SESSION_MIN_SE_SEC bounds it from below: a
 * shorter offer is refused 422 with our Min-SE);
 * the refresher is the one the UAC named, else the UAC when it supports timers, else us. A UAC that
 * offers none gets ours when it supports timers (it refreshes), and ours with us refreshing when it does
 * not (RFC 4028 9: a UAS may use the timer alone, so a phone without it still ends when it dies).
 * `Require: timer` goes on the 2xx only when the UAC supports it.
 */
import type { SessionTimerSettings } from './config';
import type { SrfRequest, SrfResponse } from './srf';

export type { SessionTimerSettings };

/** A message's headers, as drachtio-srf gives them (requests and responses alike). */
interface Headers {
  get(name: string): string | undefined;
  has(name: string): boolean;
}

/** What a dialog agreed: its interval and whether we refresh; the peer's support of timers and UPDATE. */
export interface TimerTerms {
  intervalSec: number;
  weRefresh: boolean;
  /** the peer named `timer` in Supported or Require */
  peerSupports: boolean;
  /** the peer allows UPDATE: refreshes go as UPDATE (no SDP) instead of re-INVITE */
  update: boolean;
}

function header(m: Headers, name: string, compact?: string): string | undefined {
  if (m.has(name)) return m.get(name);
  return compact && m.has(compact) ? m.get(compact) : undefined;
}

/** `Session-Expires: 90;refresher=uac` → { interval: 90, refresher: 'uac' }; null when absent or malformed. */
export function parseSessionExpires(m: Headers): { interval: number; refresher: 'uac' | 'uas' | null } | null {
  const v = header(m, 'Session-Expires', 'x');
  const r = v ? /^\s*(\d{1,9})\s*(;.*)?$/.exec(v) : null;
  if (!r) return null;
  const refresher = /;\s*refresher\s*=\s*(uac|uas)\b/i.exec(r[2] ?? '')?.[1]?.toLowerCase() as 'uac' | 'uas' | undefined;
  return { interval: Number(r[1]), refresher: refresher ?? null };
}

/** The message's Min-SE (0 when absent or malformed). */
export function minSeOf(m: Headers): number {
  const n = Number(/^\s*(\d{1,9})/.exec(header(m, 'Min-SE') ?? '')?.[1] ?? 0);
  return Number.isFinite(n) ? n : 0;
}

/** Whether an option tag is in the message's Supported or Require (drachtio-srf joins repeated headers with commas). */
function hasTag(m: Headers, tag: string): boolean {
  const tags = `${header(m, 'Supported', 'k') ?? ''},${header(m, 'Require') ?? ''}`.toLowerCase().split(',');
  return tags.some((t) => t.trim() === tag);
}

function allowsUpdate(m: Headers): boolean {
  return (header(m, 'Allow') ?? '')
    .toUpperCase()
    .split(',')
    .some((t) => t.trim() === 'UPDATE');
}

/** An INVITE whose Session-Expires is below our Min-SE: the Min-SE of the 422 to send; else null. */
export function tooShort(req: Headers, s: SessionTimerSettings): number | null {
  const se = parseSessionExpires(req);
  return se && se.interval < s.minSeSec ? s.minSeSec : null;
}

/** The terms of a dialog we answer (the INVITE's offer, our settings); null: no session timer. */
export function uasTerms(req: Headers, s: SessionTimerSettings): (TimerTerms & { refresher: 'uac' | 'uas' }) | null {
  const se = parseSessionExpires(req);
  if (!se && s.expiresSec === 0) return null;
  const floor = Math.max(minSeOf(req), s.minSeSec);
  const intervalSec = se ? Math.max(se.interval, floor) : Math.max(s.expiresSec, floor);
  const peerSupports = hasTag(req, 'timer');
  const refresher = peerSupports ? (se?.refresher ?? 'uac') : 'uas';
  return { intervalSec, refresher, weRefresh: refresher === 'uas', peerSupports, update: allowsUpdate(req) };
}

/** The headers of our 2xx to an INVITE (or a refresh) under these terms (`refresher` named for that transaction). */
export function answerHeaders(t: { intervalSec: number; peerSupports: boolean }, refresher: 'uac' | 'uas'): Record<string, string> {
  return { 'Session-Expires': `${t.intervalSec};refresher=${refresher}`, ...(t.peerSupports ? { Require: 'timer' } : {}) };
}

/** The headers of our 2xx to an INVITE (none: no session timer; Supported: timer either way). */
export function uasAnswerHeaders(req: Headers, s: SessionTimerSettings | undefined): Record<string, string> {
  const t = s ? uasTerms(req, s) : null;
  return { Supported: 'timer', ...(t ? answerHeaders(t, t.refresher) : {}) };
}

/** The terms of a dialog we made, from the 2xx to our INVITE; null when it took no session timer (RFC 4028 7.2). */
export function uacTerms(res: Headers | undefined): TimerTerms | null {
  const se = res ? parseSessionExpires(res) : null;
  if (!res || !se || se.interval <= 0) return null;
  return { intervalSec: se.interval, weRefresh: (se.refresher ?? 'uac') === 'uac', peerSupports: true, update: allowsUpdate(res) };
}

/** The headers offering a session timer on an INVITE of ours; `minSe`: a 422's, raising ours. */
export function offerHeaders(s: SessionTimerSettings, minSe = 0): Record<string, string> {
  if (s.expiresSec === 0 && minSe === 0) return { Supported: 'timer' };
  const min = Math.max(s.minSeSec, minSe);
  return { Supported: 'timer', 'Session-Expires': String(Math.max(s.expiresSec, min)), 'Min-SE': String(min) };
}

/** Middleware: a new INVITE offering a Session-Expires below our Min-SE gets 422 with it (RFC 4028 9). */
export function sessionIntervalCheck(s: () => SessionTimerSettings) {
  return (req: SrfRequest, res: SrfResponse, next: () => void): void => {
    const min = req.method === 'INVITE' ? tooShort(req, s()) : null;
    if (min === null) return next();
    res.send(422, { headers: { 'Min-SE': String(min) } });
  };
}
