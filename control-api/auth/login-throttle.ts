// Password-guessing throttle of every password check in /auth (POST /auth/login, the password of
// POST /auth/unregister). Two counters of attempts per submitted username (existing or not, so the
// answers never tell which usernames exist), in Redis so every control-api copy shares them:
//   source:  username + client address: 5 attempts free, then each next one waits 1 s, 2 s, 4 s...
//            up to 60 s after the previous one;
//   account: username over all addresses: 50 attempts free, then 1 s doubling up to 15 s; an
//            address that logged in to this account within 30 days is exempt, so a distributed
//            guesser cannot keep the owner out from a usual address.
// An attempt is counted before the password is checked (parallel guesses cannot all slip through a
// free slot); a success takes its own attempt back and clears the source counter. A counter is
// forgotten 15 minutes after its last attempt. A refused attempt is not counted and is not checked:
// 429 RATE_LIMIT_EXCEEDED with Retry-After, details[0].limited_by `ip` (source) or `customer` (account).
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { clock } from '../../core/clock';
import { rateLimited, type ApiError } from '../../core/errors';
import { sourceSubject } from '../../core/net';

export interface ThrottleTier {
  /** Attempts allowed without delay within the window. */
  free: number;
  /** First delay once the free attempts are used; doubles with every further attempt. */
  baseMs: number;
  capMs: number;
}

export const LOGIN_THROTTLE = {
  source: { free: 5, baseMs: 1000, capMs: 60_000 } satisfies ThrottleTier,
  account: { free: 50, baseMs: 1000, capMs: 15_000 } satisfies ThrottleTier,
  /** A counter is forgotten this long after its last counted attempt. */
  windowMs: 15 * 60_000,
  /** How long a successful address stays exempt from the account counter. */
  knownSourceMs: 30 * 24 * 3600_000,
  /** At most this many known addresses are kept per account. */
  knownSourcesMax: 20,
};

// KEYS: counter hashes (f = attempts, t = last attempt, n = earliest next attempt), ARGV: now, window,
// then free/base/cap per key. Refused: returns {index, ms to wait} of the tightest key, counting nothing.
// Allowed: counts the attempt in every key and returns {0, 0}.
const ATTEMPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local wait, which = 0, 0
local state = {}
for i, k in ipairs(KEYS) do
  local h = redis.call('HMGET', k, 'f', 't', 'n')
  local f, t, n = tonumber(h[1] or '0'), tonumber(h[2] or '0'), tonumber(h[3] or '0')
  if now - t > window then f, n = 0, 0 end
  state[i] = f
  local free = tonumber(ARGV[3 + (i - 1) * 3])
  if f >= free and now < n and n - now > wait then wait, which = n - now, i end
end
if wait > 0 then return {which, wait} end
for i, k in ipairs(KEYS) do
  local free = tonumber(ARGV[3 + (i - 1) * 3])
  local base = tonumber(ARGV[4 + (i - 1) * 3])
  local cap = tonumber(ARGV[5 + (i - 1) * 3])
  local f = state[i] + 1
  local n = 0
  if f >= free then n = now + math.min(base * 2 ^ (f - free), cap) end
  redis.call('HSET', k, 'f', f, 't', now, 'n', n)
  redis.call('PEXPIRE', k, window + cap)
end
return {0, 0}
`;

// KEYS[1] the account counter: one attempt less, when there is one to take back.
const TAKE_BACK = `
if tonumber(redis.call('HGET', KEYS[1], 'f') or '0') > 0 then redis.call('HINCRBY', KEYS[1], 'f', -1) end
return 0
`;

export interface LoginThrottle {
  /** Counts one password attempt; an ApiError (429) when it must wait instead. */
  attempt(username: string, source: string): Promise<ApiError | null>;
  /** The password was right: the attempt is taken back and the address becomes known. */
  succeeded(username: string, source: string): Promise<void>;
}

export function createLoginThrottle(redis: Redis, prefix: string): LoginThrottle {
  const T = LOGIN_THROTTLE;
  const subject = (username: string) => createHash('sha256').update(username.trim().toLowerCase()).digest('hex').slice(0, 32);
  const keys = (username: string, address: string) => {
    const u = subject(username);
    // an IPv6 client counts by its /64 (a new address per guess is free for its holder)
    const source = sourceSubject(address);
    return { source: `${prefix}login:src:${u}:${source}`, account: `${prefix}login:acct:${u}`, known: `${prefix}login:known:${u}` };
  };
  return {
    async attempt(username, source) {
      const k = keys(username, source);
      const now = clock.nowMs();
      const seen = await redis.zscore(k.known, sourceSubject(source));
      const exempt = seen !== null && now - Number(seen) < T.knownSourceMs;
      const tiers = exempt ? [T.source] : [T.source, T.account];
      const list = exempt ? [k.source] : [k.source, k.account];
      const args = tiers.flatMap((t) => [t.free, t.baseMs, t.capMs]);
      const [which, waitMs] = (await redis.eval(ATTEMPT, list.length, ...list, now, T.windowMs, ...args)) as [number, number];
      if (which === 0) return null;
      return rateLimited(which === 1 ? 'ip' : 'customer', waitMs / 1000);
    },
    async succeeded(username, source) {
      const k = keys(username, source);
      const now = clock.nowMs();
      await redis
        .multi()
        .del(k.source)
        .eval(TAKE_BACK, 1, k.account)
        .zadd(k.known, now, sourceSubject(source))
        .zremrangebyscore(k.known, '-inf', now - T.knownSourceMs)
        .zremrangebyrank(k.known, 0, -(T.knownSourcesMax + 1))
        .pexpire(k.known, T.knownSourceMs)
        .exec();
    },
  };
}
