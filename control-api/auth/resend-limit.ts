// Email-verify-resend budget per account (spec Limits): one send per 60 s and 5 per 24 h. Kept in Redis as
// a sorted set of send times taken from the controllable clock (not Redis TTLs), so tests can move time.
import type { Redis } from 'ioredis';
import { clock } from '../../core/clock';

export const RESEND_MIN_GAP_MS = 60_000;
export const RESEND_WINDOW_MS = 24 * 3600_000;
export const RESEND_MAX_PER_WINDOW = 5;

// KEYS[1] set of send times; ARGV now, gap, window, max. Returns 1 and records the send when allowed.
const TAKE = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
local last = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if last[2] ~= nil and now - tonumber(last[2]) < tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[1] .. '-' .. redis.call('ZCARD', KEYS[1]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) + tonumber(ARGV[2]))
return 1
`;

/** True when one more mail may go out now for `subject` (and counts it); false when over budget. */
export async function takeResendSlot(redis: Redis, subject: string): Promise<boolean> {
  const r = await redis.eval(TAKE, 1, `auth:mail-budget:${subject}`, clock.nowMs(), RESEND_MIN_GAP_MS, RESEND_WINDOW_MS, RESEND_MAX_PER_WINDOW);
  return r === 1;
}
