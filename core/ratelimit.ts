/**
 * Rate limits (spec: Limits) as GCRA token buckets in Redis, driven through rate-limiter-flexible's
 * RateLimiterRedis (its consume()/RateLimiterRes contract) with our own Lua step: a bucket of
 * `burst` requests refilled at `rate` per second, exact at the edge (request burst+1 at one instant
 * is refused). Time comes from core/clock so tests can freeze it.
 */
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { clock } from './clock';

export type TierName = 'auth_public' | 'auth_protected' | 'v1_ip' | 'customer' | 'customer_direct' | 'customer_delegate';

export interface Tier {
  rate: number;
  burst: number;
  limitedBy: 'ip' | 'customer';
}

/** The spec's Limits table. */
export const TIERS: Record<TierName, Tier> = {
  auth_public: { rate: 10, burst: 20, limitedBy: 'ip' },
  auth_protected: { rate: 10, burst: 20, limitedBy: 'ip' },
  v1_ip: { rate: 200, burst: 400, limitedBy: 'ip' },
  customer: { rate: 16.7, burst: 33, limitedBy: 'customer' },
  customer_direct: { rate: 50, burst: 100, limitedBy: 'customer' },
  customer_delegate: { rate: 8.3, burst: 16, limitedBy: 'customer' },
};

// KEYS[1]; ARGV: cost, burst, interval_ms, now_ms. Returns {consumed, ms_before_next}:
// consumed > burst means refused, and ms_before_next is then the wait until one more fits.
const GCRA_LUA = `
local cost = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local interval = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
-- tat can only run ahead of now by the burst window; further means the clock went back: start afresh.
if tat < now or tat > now + (burst + 1) * interval then tat = now end
local new_tat = tat + cost * interval
local allow_at = new_tat - burst * interval
if allow_at - now > interval / 2 then -- tolerance: float sums of epoch ms drift by fractions of a ms
  return {burst + 1, math.ceil(allow_at - now)}
end
-- Keep the key a while past its last use: a lingering tat in the past is harmless, and a frozen test
-- clock must not see the bucket vanish in real time.
redis.call('SET', KEYS[1], string.format('%.17g', new_tat), 'PX', math.ceil(new_tat - now + burst * interval) + 60000)
local remaining = math.max(0, math.floor((now - allow_at) / interval))
return {burst - remaining, math.ceil(new_tat - now)}
`;

type GcraClient = Redis & { plGcra(key: string, cost: string, burst: string, interval: string, now: string): Promise<[number, number]> };

class GcraRateLimiter extends RateLimiterRedis {
  private readonly intervalMs: number;
  private readonly gcraClient: GcraClient;

  constructor(client: Redis, keyPrefix: string, rate: number, burst: number) {
    super({ storeClient: client, keyPrefix, points: burst, duration: Math.max(1, Math.ceil(burst / rate)), customIncrTtlLuaScript: GCRA_LUA });
    if (!('plGcra' in client && typeof client.plGcra === 'function')) {
      client.defineCommand('plGcra', { numberOfKeys: 1, lua: GCRA_LUA });
    }
    this.gcraClient = client as GcraClient; // defineCommand added plGcra at run time
    this.intervalMs = 1000 / rate;
  }

  // rate-limiter-flexible calls _upsert for consume(); we answer with the GCRA step.
  _upsert(rlKey: string, points: number): Promise<[number, number]> {
    return this.gcraClient.plGcra(rlKey, String(points), String(this.points), String(this.intervalMs), String(clock.nowMs()));
  }
}

export type LimitResult = { allowed: true } | { allowed: false; retryAfterSec: number; limitedBy: 'ip' | 'customer' };

export interface Limiter {
  readonly tier: TierName;
  readonly limitedBy: 'ip' | 'customer';
  /** Takes one token for `key`. Redis errors or a slow Redis (> timeoutMs) let the request through. */
  consume(key: string): Promise<LimitResult>;
}

const ALLOWED: LimitResult = { allowed: true };

/**
 * One limiter per tier. `scale` multiplies rate and burst (RATE_LIMIT_SCALE); 0 disables.
 * `prefix` namespaces keys (config.redisKeyPrefix), e.g. `pl:rl:customer:<id>`.
 */
export function createLimiter(redis: Redis, tier: TierName, opts: { scale: number; prefix: string; timeoutMs?: number; onError?: (e: unknown) => void }): Limiter {
  const t = TIERS[tier];
  const timeoutMs = opts.timeoutMs ?? 250;
  if (!(opts.scale > 0)) return { tier, limitedBy: t.limitedBy, consume: async () => ALLOWED };
  const burst = Math.max(1, Math.round(t.burst * opts.scale));
  const rl = new GcraRateLimiter(redis, `${opts.prefix}rl:${tier}`, t.rate * opts.scale, burst);
  return {
    tier,
    limitedBy: t.limitedBy,
    async consume(key: string): Promise<LimitResult> {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          rl.consume(key),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error('rate limiter timeout')), timeoutMs);
          }),
        ]);
        return ALLOWED;
      } catch (e) {
        if (e instanceof RateLimiterRes) {
          return { allowed: false, retryAfterSec: Math.max(1, Math.ceil(e.msBeforeNext / 1000)), limitedBy: t.limitedBy };
        }
        opts.onError?.(e);
        return ALLOWED; // fail open: Redis trouble must not take the API down
      } finally {
        if (timer) clearTimeout(timer);
      }
    },
  };
}
