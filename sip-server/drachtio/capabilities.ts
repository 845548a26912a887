/**
 * What an OPTIONS answer says the platform can do (RFC 3261 11.2: Allow, Accept, Supported), added by
 * the server to each 2xx to OPTIONS, out of dialog and in dialog, unless the application set its own.
 *
 * - Allow: the methods taken inside dialogs whatever the application routes (ACK, BYE, CANCEL and
 *   OPTIONS; PRACK and UPDATE, which the server passes both ways, reliable.ts; INFO and REFER, which
 *   drachtio-srf dialogs hand to media-app: REFER is a transfer, INFO is answered inside calls), plus
 *   the new requests a connected application has routed (`route|invite`, `route|register`,
 *   `route|message` ...). NOTIFY, SUBSCRIBE and PUBLISH are listed only when an application routes them
 *   (media-app routes SUBSCRIBE: busy lamp, presence and message summary, docs/pbx.md).
 * - Accept: `application/sdp` (offers and answers), `application/dtmf-relay` and `application/dtmf`
 *   (what an in-dialog INFO may carry: media-app/call/dtmf.ts answers any other body 415);
 *   `text/plain` too when MESSAGE is routed (the pager-mode messages between extensions).
 * - Supported: `100rel` (reliable provisionals, RFC 3262), `replaces` (attended transfer, RFC
 *   3891) and `timer` (session timers, RFC 4028: media-app/call/session-timer.ts), the option tags
 *   media-app accepts in Require (media-app/request-checks.ts). No `outbound`, no `path` (Path is
 *   honoured only from the trusted edge).
 */
import type { SipRequest, SipResponse } from '../message';

/** The order Allow lists methods in; routed methods not named here follow in the order routed. */
const METHOD_ORDER = ['INVITE', 'ACK', 'CANCEL', 'BYE', 'OPTIONS', 'PRACK', 'UPDATE', 'INFO', 'REFER', 'REGISTER', 'MESSAGE', 'SUBSCRIBE', 'NOTIFY', 'PUBLISH'];
const IN_DIALOG = ['ACK', 'BYE', 'CANCEL', 'OPTIONS', 'PRACK', 'UPDATE', 'INFO', 'REFER'];
/** The bodies taken whatever is routed: SDP, and the DTMF bodies of an in-dialog INFO. */
const ACCEPT = ['application/sdp', 'application/dtmf-relay', 'application/dtmf'];
export const SUPPORTED_OPTION_TAGS: readonly string[] = ['100rel', 'replaces', 'timer'];

export interface Capabilities {
  allow: string[];
  accept: string[];
  supported: string[];
}

/** `routed`: the methods connected applications route (any case; `cdr:*` and the like are ignored). */
export function capabilities(routed: Iterable<string>): Capabilities {
  const methods = new Set(IN_DIALOG);
  for (const m of routed) if (/^[a-z]+$/i.test(m)) methods.add(m.toUpperCase());
  const known = METHOD_ORDER.filter((m) => methods.has(m));
  const others = [...methods].filter((m) => !METHOD_ORDER.includes(m));
  return {
    allow: [...known, ...others],
    accept: methods.has('MESSAGE') ? [...ACCEPT, 'text/plain'] : [...ACCEPT],
    supported: [...SUPPORTED_OPTION_TAGS],
  };
}

/** Adds Allow, Accept and Supported to a 2xx answering OPTIONS, each only when absent. */
export function withCapabilities(req: SipRequest, res: SipResponse, caps: () => Capabilities): void {
  if (req.method !== 'OPTIONS' || res.status < 200 || res.status >= 300) return;
  const c = caps();
  if (!res.headers.has('Allow')) res.headers.set('Allow', c.allow.join(', '));
  if (!res.headers.has('Accept')) res.headers.set('Accept', c.accept.join(', '));
  if (!res.headers.has('Supported')) res.headers.set('Supported', c.supported.join(', '));
}
