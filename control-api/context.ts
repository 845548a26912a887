/**
 * What every part of control-api receives: configuration, the knex pool, Redis, the logger, the
 * repositories and the shared per-request credential state. Built once by `createContext`.
 */
import type { Knex } from 'knex';
import { Redis } from 'ioredis';
import type { Config } from '../core/config';
import type { Logger } from '../core/logger';
import { repos, type Repos, type CustomerStatusInfo } from '../core/repos';
import type { PermissionLevel } from '../core/permissions';
import { EgressPolicy } from '../core/net';

/** Who is calling, as established by the credential middleware (`req.auth`). */
/** The session a login or delegate token belongs to (control-api/middleware/sessions.ts). */
export interface SessionRef {
  /** The token's `sid`; null for a token signed before sessions existed. */
  id: string | null;
  /** A delegate token's `psid`: the login session that asked for it (ended with it); null: none. */
  parentId: string | null;
  /** The agent's session generation the token was signed in. */
  generation: number;
  expiresAtMs: number;
}

export type AuthContext =
  | { kind: 'agent'; customerId: string; agentId: string; permission: number; session?: SessionRef }
  | { kind: 'accesskey'; customerId: string; accesskeyId: string; permission: number }
  | {
      kind: 'direct';
      customerId: string;
      resourceType: string;
      resourceId: string;
      allowedResourceId: string;
      scopeVersion: number;
      permission: number;
    }
  | { kind: 'delegate'; customerId: string; agentId: string; delegatorCustomerId: string; permission: number; session?: SessionRef };

/** Looks up a customer's status for the account gate; may throw (the gate then fails open). */
export type StatusLookup = (customerId: string) => Promise<CustomerStatusInfo | null>;

export interface AppContext {
  config: Readonly<Config>;
  db: Knex;
  redis: Redis;
  logger: Logger;
  repos: Repos;
  statusLookup: StatusLookup;
  /** Every connection made on a customer's behalf goes through this (core/net). */
  egress: EgressPolicy;
}

export interface ContextOverrides {
  statusLookup?: StatusLookup;
}

export function createContext(parts: { config: Readonly<Config>; db: Knex; redis: Redis; logger: Logger }, overrides: ContextOverrides = {}): AppContext {
  const r = repos(parts.db);
  return {
    ...parts,
    repos: r,
    statusLookup: overrides.statusLookup ?? ((id) => r.customers.statusOf(id)),
    egress: new EgressPolicy(parts.config.egress),
  };
}

/** Redis client with the options control-api wants (fail fast rather than queueing forever). */
export function createRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
}

declare global {
  namespace Express {
    interface Request {
      /** `X-Request-Id`, echoed or generated; in every log line and error envelope. */
      requestId: string;
      log: Logger;
      /** Set by the credential middleware on authenticated routes. */
      auth?: AuthContext;
      /** Permission level the matched route requires (for logs). */
      requiredLevel?: PermissionLevel;
    }
  }
}
