/**
 * Short-lived SIP credentials for agents of the agent workspace who take calls in the browser phone.
 *
 * Decision: a credential is bound to one of the agent's extensions (an `extension` address of the
 * agent). The browser registers as that extension's address-of-record, so queues, agent dialling,
 * `connect` and POST /calls reach the browser exactly like a desk phone, and a desk phone registered
 * to the same extension rings together with it. The credential is a digest username/password pair
 * of its own (`web-<hex>` / random secret), not the extension's password, which the agent never sees.
 *
 * Stored in Redis with a TTL (WEB_SIP_CREDENTIAL_TTL_SEC, at most 12 hours). The registrar
 * (media-app/registrar) accepts it for that extension's AOR only while it is live, the agent is not
 * deleted and still has that extension among its addresses, and the login session that issued it
 * has not ended: `revokeAgent` (the browser phone's sign-out) removes every credential of an agent at
 * once, `revokeSession` those of one signed-out session, and a password change or an account freeze
 * (a new session generation of the agent, control-api/middleware/sessions.ts) ends all of them.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { agentsRepo } from '../repos/agents';

export const WEB_SIP_USER_PREFIX = 'web-';
export const WEB_SIP_CREDENTIAL_MAX_TTL_SEC = 12 * 3600;

export interface WebSipCredential {
  /** Digest username (`web-` + 24 hex). */
  username: string;
  /** Digest password (random, 32 base64url characters). */
  password: string;
  customerId: string;
  agentId: string;
  extensionId: string;
  /** The AOR the credential may register and call as. */
  aorUser: string;
  aorDomain: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  /** The `sid` of the login or delegate token that asked for it (null: a token without one). */
  sessionId?: string | null;
  /** The agent's session generation that token was signed in; absent (stored before sessions): 0. */
  sessionGeneration?: number;
}

export function isWebSipUsername(u: string): boolean {
  return u.startsWith(WEB_SIP_USER_PREFIX) && /^web-[0-9a-f]{24}$/.test(u);
}

export class WebSipCredentials {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private credKey = (username: string) => `${this.prefix}websip:cred:${username}`;
  private agentKey = (agentId: string) => `${this.prefix}websip:agent:${agentId.toLowerCase()}`;

  async issue(input: Omit<WebSipCredential, 'username' | 'password' | 'expiresAt'>, ttlSec: number): Promise<WebSipCredential> {
    const ttl = Math.max(1, Math.min(Math.floor(ttlSec), WEB_SIP_CREDENTIAL_MAX_TTL_SEC));
    const cred: WebSipCredential = {
      ...input,
      username: WEB_SIP_USER_PREFIX + randomBytes(12).toString('hex'),
      password: randomBytes(24).toString('base64url'),
      expiresAt: clock.nowMs() + ttl * 1000,
    };
    const agentKey = this.agentKey(input.agentId);
    await this.redis
      .multi()
      .set(this.credKey(cred.username), JSON.stringify(cred), 'EX', ttl)
      .sadd(agentKey, cred.username)
      // the agent's index outlives its longest credential
      .expire(agentKey, WEB_SIP_CREDENTIAL_MAX_TTL_SEC + 60)
      .exec();
    return cred;
  }

  /** The live credential of `username`, or null (unknown, expired or revoked). */
  async get(username: string): Promise<WebSipCredential | null> {
    if (!isWebSipUsername(username)) return null;
    const raw = await this.redis.get(this.credKey(username));
    if (!raw) return null;
    const cred = JSON.parse(raw) as WebSipCredential;
    return cred.expiresAt > clock.nowMs() ? cred : null;
  }

  /** Revokes every credential of an agent; resolves how many were live. */
  async revokeAgent(agentId: string): Promise<number> {
    const agentKey = this.agentKey(agentId);
    const names = await this.redis.smembers(agentKey);
    const removed = names.length ? await this.redis.del(...names.map(this.credKey)) : 0;
    await this.redis.del(agentKey);
    return removed;
  }

  /** Revokes the credentials of an agent that one session (`sid`) asked for; resolves how many were live. */
  async revokeSession(agentId: string, sessionId: string): Promise<number> {
    const agentKey = this.agentKey(agentId);
    const names = await this.redis.smembers(agentKey);
    const ended: string[] = [];
    for (const name of names) {
      const cred = await this.get(name);
      if (cred?.sessionId === sessionId) ended.push(name);
    }
    if (!ended.length) return 0;
    const removed = await this.redis.del(...ended.map(this.credKey));
    await this.redis.srem(agentKey, ...ended);
    return removed;
  }
}

/**
 * The credential of `username` if it may act as extension `extensionId` now: live, its agent still
 * exists, is still in the session generation the credential was issued in (a password change or a
 * freeze ends it) and still has that extension among its addresses (deleting the agent or removing
 * the address ends it at once, without waiting for the TTL).
 */
export async function usableWebSipCredential(db: Db, store: WebSipCredentials, username: string, extension: { id: string; extension: string }): Promise<WebSipCredential | null> {
  const cred = await store.get(username);
  if (!cred || cred.extensionId !== extension.id) return null;
  const agent = await agentsRepo(db).get(cred.agentId, { customerId: cred.customerId });
  if (!agent || Number(agent.session_generation) !== (cred.sessionGeneration ?? 0)) return null;
  return agent.addresses.some((a) => a.type === 'extension' && a.target === extension.extension) ? cred : null;
}
