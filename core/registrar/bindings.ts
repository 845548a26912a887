/**
 * Reading the registrar's bindings (media-app/registrar/bindings.ts owns them) from control-api, to
 * tell whether an extension is registered before dialling it. Same layout, mirrored because core
 * must not import media-app: one hash per address of record `username@domain_name` (lowercase) at
 * `${REDIS_KEY_PREFIX}reg:<aor>`, a field per Contact URI, each value JSON with `expiresAt` (epoch ms).
 */
import type { Redis } from 'ioredis';
import { clock } from '../clock';

/**
 * sip-server's notice that a WebSocket connection ended (an un-REGISTER it makes itself, with the
 * connection's own source): the registrar drops the bindings made over that connection.
 */
export const FLOW_CLOSED_HEADER = 'X-Flow-Closed';

/** Transports whose contacts are reachable only over the connection they registered on (RFC 7118). */
export const isWebSocketTransport = (protocol: string | undefined): boolean => protocol === 'ws' || protocol === 'wss';

export const aorOf = (username: string, domainName: string): string => `${username}@${domainName}`.toLowerCase();

/** Keep in step with media-app/registrar/bindings.ts bindingKey. */
export const bindingsKey = (aor: string): string => `reg:${aor.toLowerCase()}`;

/** Contact URIs of the AOR that have not expired at `nowMs`. */
export async function liveContacts(redis: Redis, keyPrefix: string, aor: string, nowMs = clock.nowMs()): Promise<string[]> {
  const all = await redis.hgetall(keyPrefix + bindingsKey(aor));
  const live: string[] = [];
  for (const [contact, raw] of Object.entries(all)) {
    try {
      if ((JSON.parse(raw) as { expiresAt?: number }).expiresAt! > nowMs) live.push(contact);
    } catch {
      // A malformed binding counts as none.
    }
  }
  return live;
}

export async function isRegistered(redis: Redis, keyPrefix: string, aor: string, nowMs = clock.nowMs()): Promise<boolean> {
  return (await liveContacts(redis, keyPrefix, aor, nowMs)).length > 0;
}

/** Writes one binding in the registrar's shape (tests stand in for a REGISTER with it). */
export async function putBinding(redis: Redis, keyPrefix: string, aor: string, contact: string, expiresAtMs: number): Promise<void> {
  const key = keyPrefix + bindingsKey(aor);
  const binding = { contact, expiresAt: expiresAtMs, callId: 'test', cseq: 1, source: { address: '127.0.0.1', port: 5060, protocol: 'udp' }, userAgent: 'test' };
  await redis.hset(key, contact, JSON.stringify(binding));
  await redis.pexpire(key, Math.max(1000, expiresAtMs - Date.now() + 60_000));
}
