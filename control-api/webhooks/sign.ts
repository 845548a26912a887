/**
 * Webhook signature (README.md): `X-Webhook-Signature: sha256=<hex HMAC-SHA256(secret, "<ts>.<body>")>`
 * with `X-Webhook-Timestamp: <ts>` (Unix seconds). The timestamp is inside the signed content, so a
 * captured request cannot be replayed later with a fresh timestamp.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Webhook-Signature';
export const TIMESTAMP_HEADER = 'X-Webhook-Timestamp';
/** Receivers should refuse a timestamp further than this from their clock. */
export const REPLAY_WINDOW_SEC = 300;

export function sign(secret: string, timestampSec: number, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(`${timestampSec}.${body}`).digest('hex');
}

/** What a receiver does (also used by the tests). */
export function verify(secret: string, header: string | undefined, timestamp: string | undefined, body: string, nowSec = Math.floor(Date.now() / 1000)): boolean {
  if (!header || !timestamp || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowSec - Number(timestamp)) > REPLAY_WINDOW_SEC) return false;
  const want = Buffer.from(sign(secret, Number(timestamp), body));
  const got = Buffer.from(header);
  return want.length === got.length && timingSafeEqual(want, got);
}
