/**
 * The signature a node-to-node bridge leg carries (X-Openvoice-Conference-Leg on its INVITE): the
 * node of a participant's call asks the conference's host to put the leg in the mix as that
 * participant. HMAC-SHA256, with the platform secret every node shares (Redis `secret:conference-leg`),
 * over the conference id, the call id, the customer id, the conferencecall id and the expiry:
 *
 *   <conference>;<call>;<customer>;<conferencecall>;<expiry, unix seconds>;<base64url HMAC>
 *
 * Pure functions: the host refuses (403) anything that does not verify.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const LEG_HEADER = 'X-Openvoice-Conference-Leg';
/** The Request-URI user of a bridge leg's INVITE is this prefix and the conference id. */
export const LEG_USER_PREFIX = 'cleg.';
/** Name of the shared secret in Redis (registrar's sharedSecret). */
export const LEG_SECRET_NAME = 'conference-leg';
/** How long a signature is good for: the INVITE leaves at once. */
export const LEG_TTL_SEC = 30;

export interface LegClaims {
  conferenceId: string;
  callId: string;
  customerId: string;
  conferencecallId: string;
  /** Unix seconds. */
  expires: number;
}

export type LegCheck = { ok: true; claims: LegClaims } | { ok: false; reason: 'malformed' | 'signature' | 'expired' | 'conference' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function mac(secret: string, fields: string): Buffer {
  return createHmac('sha256', secret).update(`openvoice-conference-leg;${fields}`).digest();
}

export function signLeg(secret: string, c: Omit<LegClaims, 'expires'>, nowMs = Date.now(), ttlSec = LEG_TTL_SEC): string {
  const fields = [c.conferenceId, c.callId, c.customerId, c.conferencecallId, String(Math.floor(nowMs / 1000) + ttlSec)].join(';');
  return `${fields};${mac(secret, fields).toString('base64url')}`;
}

/** Checks a header value; `conferenceId`, when given, must be the one signed. */
export function verifyLeg(secret: string, value: string | undefined, opts: { conferenceId?: string; nowMs?: number } = {}): LegCheck {
  const parts = (value ?? '').trim().split(';');
  if (parts.length !== 6) return { ok: false, reason: 'malformed' };
  const [conferenceId, callId, customerId, conferencecallId, exp, sig] = parts as [string, string, string, string, string, string];
  if (![conferenceId, callId, customerId, conferencecallId].every((x) => UUID.test(x)) || !/^\d{1,12}$/.test(exp)) return { ok: false, reason: 'malformed' };
  const want = mac(secret, parts.slice(0, 5).join(';'));
  const got = Buffer.from(sig, 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return { ok: false, reason: 'signature' };
  const expires = Number(exp);
  if (expires * 1000 < (opts.nowMs ?? Date.now())) return { ok: false, reason: 'expired' };
  if (opts.conferenceId && opts.conferenceId !== conferenceId) return { ok: false, reason: 'conference' };
  return { ok: true, claims: { conferenceId, callId, customerId, conferencecallId, expires } };
}
