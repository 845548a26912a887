/**
 * Where the registrar keeps an extension's bindings in Redis (under REDIS_KEY_PREFIX), so control-api
 * can tell whether an extension is registered before dialling it. One sorted set per address of
 * record `username@domain_name` (lowercase): member = the Contact URI, score = expiry in epoch ms.
 * A binding whose score is in the past is expired (the registrar prunes it lazily).
 */
import type { Redis } from 'ioredis';
import { clock } from '../clock';

export const aorOf = (username: string, domainName: string): string => `${username}@${domainName}`.toLowerCase();

export const bindingsKey = (aor: string): string => `reg:aor:${aor.toLowerCase()}`;

/** Contacts of the AOR that have not expired at `nowMs`. */
export async function liveContacts(redis: Redis, keyPrefix: string, aor: string, nowMs = clock.nowMs()): Promise<string[]> {
  return redis.zrangebyscore(keyPrefix + bindingsKey(aor), `(${nowMs}`, '+inf');
}

export async function isRegistered(redis: Redis, keyPrefix: string, aor: string, nowMs = clock.nowMs()): Promise<boolean> {
  return (await redis.zcount(keyPrefix + bindingsKey(aor), `(${nowMs}`, '+inf')) > 0;
}

/** Adds or refreshes one binding (the registrar's write; tests use it to stand in for a REGISTER). */
export async function putBinding(redis: Redis, keyPrefix: string, aor: string, contact: string, expiresAtMs: number): Promise<void> {
  const key = keyPrefix + bindingsKey(aor);
  await redis.zadd(key, String(expiresAtMs), contact);
  const top = await redis.zrange(key, '-1', '-1', 'WITHSCORES');
  await redis.pexpireat(key, Number(top[1] ?? expiresAtMs) + 60_000);
}
