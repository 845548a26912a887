/**
 * Builds the control-api app for supertest against the real test Postgres and Redis, and creates
 * account fixtures. Every app gets its own Redis key prefix (rate-limit buckets never leak between
 * tests or concurrently running suites) and credential/status caches off (cacheTtlMs 0).
 *
 *   const t = await buildTestApp();            // t.app for supertest, t.ctx, t.platform
 *   const f = await createFixture(t.ctx);      // customer + admin agent + accesskey + login token
 *   await request(t.app).get('/v1.0/customer').query({ accesskey: f.accesskey });
 *   await t.close();
 */
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import { loadConfig } from '../core/config';
import { createLogger } from '../core/logger';
import { createContext, createRedis, type AppContext, type ContextOverrides } from '../control-api/context';
import { createApp, type AppOptions, type PlatformApp } from '../control-api/app';
import { testDb, testDatabaseUrl, truncateAll } from './db';
import { tieEventStream } from './event-stream';
import { eventStreamKey } from '../core/events/bus';
import { clock } from '../core/clock';
import { signToken, LOGIN_TOKEN_TTL_SEC } from '../core/credentials';
import { Permission } from '../core/permissions';
import { repos, type CustomerRow, type AgentRow, type AccesskeyRow, type OutboundConfigRow, type CustomerStatus } from '../core/repos';

export const TEST_JWT_SECRET = 'test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';

export interface TestApp {
  app: Express;
  ctx: AppContext;
  platform: PlatformApp;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment overrides (e.g. { RATE_LIMIT_SCALE: '0' }). */
  env?: Record<string, string>;
  app?: AppOptions;
  context?: ContextOverrides;
}

export function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  const redisUrl = process.env.TEST_REDIS_URL;
  if (!redisUrl) throw new Error('TEST_REDIS_URL is not set: run `source .data/env`');
  return {
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `t${process.pid}_${randomBytes(4).toString('hex')}:`,
    JWT_SECRET: TEST_JWT_SECRET,
    DATA_DIR: path.join(os.tmpdir(), `platform-test-${process.pid}`),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    PUBLIC_URL: 'http://127.0.0.1:8080',
    RATE_LIMIT_SCALE: '1',
    ...extra,
  };
}

export async function buildTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const db = await testDb();
  const config = loadConfig({ ...testEnv(opts.env), DATABASE_URL: await testDatabaseUrl() } as NodeJS.ProcessEnv);
  const redis = createRedis(config.redisUrl);
  const logger = createLogger(config.logLevel, 'control-api-test');
  const ctx = createContext({ config, db, redis, logger }, opts.context);
  const platform = createApp(ctx, { cacheTtlMs: 0, ...opts.app });
  // eventsFor(t.ctx.redis, id): the events of this deployment (its prefix), from the stream's start
  await tieEventStream(redis, eventStreamKey(config.redisKeyPrefix), 'start');
  return {
    app: platform.app,
    ctx,
    platform,
    async close() {
      redis.disconnect();
    },
  };
}

/**
 * Mocha hooks of the API suites: a test app without rate limits and a customer fixture on it, handed to
 * `set` once up (with `each`: before every test instead, on an emptied database); the shared clock is
 * reset after each such test and after the suite, and the app closed.
 */
export function useTestApp(set: (s: { t: TestApp; f: Fixture }) => void, o: { each?: boolean } = {}): void {
  let t: TestApp | undefined;
  const fixture = async () => set({ t: t!, f: await createFixture(t!.ctx) });
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    if (!o.each) await fixture();
  });
  if (o.each) {
    beforeEach(async () => {
      await truncateAll();
      await fixture();
    });
    afterEach(() => clock.reset());
  }
  after(async () => {
    clock.reset();
    await t?.close();
  });
}

export interface Fixture {
  customer: CustomerRow;
  admin: AgentRow;
  /** The admin's password. */
  password: string;
  /** Accesskey secret and row. */
  accesskey: string;
  accesskeyRow: AccesskeyRow;
  outboundConfig: OutboundConfigRow;
  /** A login JWT for the admin agent. */
  token: string;
}

let seq = 0;

/** An active, verified customer with an admin agent, an accesskey, an empty outbound config and a login token. */
export async function createFixture(ctx: AppContext, opts: { status?: CustomerStatus; permission?: number; email?: string; username?: string } = {}): Promise<Fixture> {
  const n = `${process.pid}-${++seq}-${randomBytes(3).toString('hex')}`;
  const password = 'pw-' + randomBytes(8).toString('hex');
  return ctx.db.transaction(async (trx) => {
    const r = repos(trx);
    const customer = await r.customers.create({
      email: opts.email ?? `c${n}@example.test`,
      email_verified: true,
      status: opts.status ?? 'active',
      name: `customer ${n}`,
    });
    const admin = await r.agents.create({
      customer_id: customer.id,
      username: opts.username ?? `admin${n}@example.test`,
      password,
      permission: opts.permission ?? Permission.CustomerAdmin,
      name: 'admin',
    });
    const { row: accesskeyRow, token: accesskey } = await r.accesskeys.create({ customer_id: customer.id, name: 'fixture' });
    const outboundConfig = await r.outboundConfigs.create({ customer_id: customer.id });
    const { token } = await signToken(ctx.config.jwtSecret, { typ: 'login', sub: admin.id, customer_id: customer.id }, LOGIN_TOKEN_TTL_SEC);
    return { customer, admin, password, accesskey, accesskeyRow, outboundConfig, token };
  });
}

/** Another agent in an existing customer, with its login token. */
export async function createAgent(ctx: AppContext, customerId: string, permission: number): Promise<{ agent: AgentRow; token: string; password: string }> {
  const password = 'pw-' + randomBytes(8).toString('hex');
  const agent = await ctx.repos.agents.create({
    customer_id: customerId,
    username: `agent${process.pid}-${++seq}-${randomBytes(3).toString('hex')}@example.test`,
    password,
    permission,
  });
  const { token } = await signToken(ctx.config.jwtSecret, { typ: 'login', sub: agent.id, customer_id: customerId }, LOGIN_TOKEN_TTL_SEC);
  return { agent, token, password };
}
