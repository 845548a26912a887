/**
 * Which nonce counts were used (RFC 7616 §3.4, RFC 3261 §22.4), in Redis so every media-app node
 * sees every other's: per nonce the highest `nc` an accepted answer carried. An answer is accepted
 * only with a count above it, so a captured Authorization / Proxy-Authorization works once, on
 * whichever node, and never again (a nonce without qop counts as 1: single use). One script call
 * per claim (one round trip); a key lives as long as its nonce could still be valid.
 */
import type { Redis } from 'ioredis';

/** KEYS: the nonce's key; ARGV: the count claimed, the key's lifetime in ms. 1: claimed; 0: used. */
const CLAIM_SCRIPT = `
local seen = tonumber(redis.call('GET', KEYS[1]) or '0')
local nc = tonumber(ARGV[1])
if nc <= seen then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

export class NonceUse {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Claims count `nc` of `nonce` for `ttlMs`: true when no accepted answer carried it or a higher one. */
  async claim(nonce: string, nc: number, ttlMs: number): Promise<boolean> {
    const r = await this.redis.eval(CLAIM_SCRIPT, 1, `${this.prefix}nonce-nc:${nonce}`, nc, Math.max(1000, Math.ceil(ttlMs)));
    return Number(r) === 1;
  }
}
