/**
 * The signature a node-to-node PBX leg carries (X-Openvoice-Pbx-Leg on its INVITE): the node where a
 * phone dialled a park slot (or a pickup, or a supervise code) asks the node that holds the call to
 * give it that call through the leg. HMAC-SHA256 with the platform secret every node shares (the
 * conference legs' `secret:conference-leg`; a domain tag of its own keeps the two signatures apart)
 * over the kind, the customer, the call asked for, the caller's call, the detail and the expiry:
 *
 *   <kind>;<customer>;<subject call>;<caller call>;<detail>;<expiry, unix seconds>;<base64url HMAC>
 *
 * `detail` is what the kind needs besides the call: the slot (park), the extension rung (pickup, in
 * base64url), the mode (supervise); none for dequeue (a <Dial><Queue> on the asking node: the subject
 * is the queuecall waiting on the holding node, media-app/queue/dequeue-leg.ts).
 * Pure functions: the holding node refuses (403) anything that does not verify.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const PBX_LEG_HEADER = 'X-Openvoice-Pbx-Leg';
/** The Request-URI user of a PBX leg's INVITE is this prefix, the kind, a dot and the subject call id. */
export const PBX_LEG_USER_PREFIX = 'pleg.';
/** How long a signature is good for: the INVITE leaves at once. */
export const PBX_LEG_TTL_SEC = 30;

export const PBX_LEG_KINDS = ['park', 'pickup', 'supervise', 'dequeue'] as const;
export type PbxLegKind = (typeof PBX_LEG_KINDS)[number];

export interface PbxLegClaims {
  kind: PbxLegKind;
  customerId: string;
  /** The call asked for: the parked call, the ringing connect's master, the supervised call; for dequeue the queuecall. */
  subjectId: string;
  /** The call on the asking node the leg is for (the retriever, the picker, the supervisor). */
  callId: string;
  /** The slot, the extension picked up (base64url: an extension may hold any character), or the mode (base64url's alphabet; at most 96). */
  detail: string;
  /** Unix seconds. */
  expires: number;
}

export type PbxLegCheck = { ok: true; claims: PbxLegClaims } | { ok: false; reason: 'malformed' | 'signature' | 'expired' | 'subject' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DETAIL = /^[A-Za-z0-9_-]{0,96}$/;

function mac(secret: string, fields: string): Buffer {
  return createHmac('sha256', secret).update(`openvoice-pbx-leg;${fields}`).digest();
}

export function signPbxLeg(secret: string, c: Omit<PbxLegClaims, 'expires'>, nowMs = Date.now(), ttlSec = PBX_LEG_TTL_SEC): string {
  if (!DETAIL.test(c.detail)) throw new Error(`a PBX leg's detail must match ${DETAIL.source}`);
  const fields = [c.kind, c.customerId, c.subjectId, c.callId, c.detail, String(Math.floor(nowMs / 1000) + ttlSec)].join(';');
  return `${fields};${mac(secret, fields).toString('base64url')}`;
}

/** The Request-URI user of a leg for these claims. */
export const pbxLegUser = (c: Pick<PbxLegClaims, 'kind' | 'subjectId'>): string => `${PBX_LEG_USER_PREFIX}${c.kind}.${c.subjectId}`;

/** Checks a header value; `user`, when given (the Request-URI's), must name the kind and subject signed. */
export function verifyPbxLeg(secret: string, value: string | undefined, opts: { user?: string; nowMs?: number } = {}): PbxLegCheck {
  const parts = (value ?? '').trim().split(';');
  if (parts.length !== 7) return { ok: false, reason: 'malformed' };
  const [kind, customerId, subjectId, callId, detail, exp, sig] = parts as [string, string, string, string, string, string, string];
  if (!(PBX_LEG_KINDS as readonly string[]).includes(kind) || ![customerId, subjectId, callId].every((x) => UUID.test(x)) || !DETAIL.test(detail) || !/^\d{1,12}$/.test(exp)) {
    return { ok: false, reason: 'malformed' };
  }
  const want = mac(secret, parts.slice(0, 6).join(';'));
  const got = Buffer.from(sig, 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return { ok: false, reason: 'signature' };
  const expires = Number(exp);
  if (expires * 1000 < (opts.nowMs ?? Date.now())) return { ok: false, reason: 'expired' };
  const claims: PbxLegClaims = { kind: kind as PbxLegKind, customerId, subjectId, callId, detail, expires };
  if (opts.user !== undefined && opts.user.toLowerCase() !== pbxLegUser(claims).toLowerCase()) return { ok: false, reason: 'subject' };
  return { ok: true, claims };
}

/** An extension as a pickup leg's detail (base64url of its UTF-8), and back. */
export const extensionDetail = (extension: string): string => Buffer.from(extension, 'utf8').toString('base64url');
export const detailExtension = (detail: string): string => Buffer.from(detail, 'base64url').toString('utf8');
