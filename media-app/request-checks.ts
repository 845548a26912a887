/**
 * RFC 3261 §8.2.2 checks that every new (out-of-dialog) request passes before a handler sees it:
 * a Request-URI scheme this platform cannot serve gets 416, and a Require naming an extension it
 * does not support gets 420 with Unsupported listing them. sip-server passes such requests up, as
 * drachtio-server does, because these are the application's decisions (RFC 4475 unkscm, novelsc,
 * bext01). ACK and CANCEL are never answered here: they take no response of their own.
 */
import type { SrfRequest, SrfResponse } from './kit/srf';

const SCHEMES = new Set(['sip', 'sips', 'tel']);
/** 100rel: reliable provisionals (sip-server); replaces: attended transfer (media-app/transfer); timer: session timers (call/session-timer.ts). */
export const SUPPORTED_EXTENSIONS: readonly string[] = ['100rel', 'replaces', 'timer'];

/** The option tags of the Require header values that are not supported (lower-cased, in order). */
export function unsupportedRequires(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const v of values) {
    for (const raw of v.split(',')) {
      const tag = raw.trim().toLowerCase();
      if (tag && !SUPPORTED_EXTENSIONS.includes(tag) && !out.includes(tag)) out.push(tag);
    }
  }
  return out;
}

export function requestChecks(req: SrfRequest, res: SrfResponse, next: () => void): void {
  if (req.method === 'ACK' || req.method === 'CANCEL') return next();
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(req.uri)?.[1]?.toLowerCase();
  if (!scheme || !SCHEMES.has(scheme)) {
    res.send(416);
    return;
  }
  // drachtio-srf joins repeated headers with commas, so one value holds every Require
  const unsupported = req.has('Require') ? unsupportedRequires([req.get('Require') ?? '']) : [];
  if (unsupported.length) {
    res.send(420, { headers: { Unsupported: unsupported.join(', ') } });
    return;
  }
  next();
}
