// An express app with the real auth group and the real shared middlewares (request id, credentials,
// status gate, rate limits, error envelope) over the test Postgres and Redis; mail goes to a temp outbox.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import express from 'express';
import request from 'supertest';
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import { loadConfig } from '../../../core/config';
import { createDb, migrate } from '../../../core/db/knex';
import { createLogger } from '../../../core/logger';
import { createContext, createRedis, type AppContext } from '../../../control-api/context';
import { requestId } from '../../../control-api/middleware/request-id';
import { createCredentials } from '../../../control-api/middleware/credentials';
import { createStatusGate } from '../../../control-api/middleware/status-gate';
import { createLimiters } from '../../../control-api/middleware/rate-limit';
import { errorHandler, routeNotFound } from '../../../control-api/middleware/errors';
import { authRouter, createMailerFromConfig } from '../../../control-api/auth';
import type { Mailer } from '../../../core/mail';

export interface Harness {
  app: express.Express;
  ctx: AppContext;
  db: Knex;
  redis: Redis;
  outbox: string;
  mailer: Mailer;
  scopeVersion: { value: number };
  close(): Promise<void>;
}

export function testUrls(): { db: string; redis: string } {
  const db = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:55432/platform_test';
  const redis = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:56379/1';
  return { db, redis };
}

let migrated: Promise<unknown> | null = null;

export async function startHarness(opts: { rateLimitScale?: number; smtpUrl?: string } = {}): Promise<Harness> {
  const urls = testUrls();
  const outbox = await fs.mkdtemp(path.join(os.tmpdir(), 'auth-outbox-'));
  const run = crypto.randomBytes(4).toString('hex');
  const config = loadConfig(
    {
      DATABASE_URL: urls.db,
      REDIS_URL: urls.redis,
      JWT_SECRET: 'test-secret-'.padEnd(48, 'x'),
      PUBLIC_URL: 'http://127.0.0.1:8080',
      OUTBOX_DIR: outbox,
      SMTP_URL: opts.smtpUrl ?? '',
      REDIS_KEY_PREFIX: `authtest:${run}:`,
      RATE_LIMIT_SCALE: String(opts.rateLimitScale ?? 1000),
      LOG_LEVEL: 'silent',
    },
    { persistSecret: false },
  );
  const db = createDb(config.databaseUrl, { poolMax: 5 });
  migrated ??= migrate(db);
  await migrated;
  const redis = createRedis(config.redisUrl);
  const logger = createLogger('silent');
  const ctx = createContext({ config, db, redis, logger });
  const scopeVersion = { value: 1 };
  const credentials = createCredentials(ctx, { cacheTtlMs: 0, checkDirect: async (c) => c.scope_version === scopeVersion.value });
  const gate = createStatusGate(ctx, { cacheTtlMs: 0 });
  const limiters = createLimiters(redis, { scale: config.rateLimitScale, prefix: config.redisKeyPrefix });
  const mailer = createMailerFromConfig(config);

  const app = express();
  app.set('trust proxy', false);
  app.use(requestId(logger));
  app.use(
    '/auth',
    authRouter({
      ctx,
      mailer,
      publicLimiter: limiters.authPublic,
      protectedLimiter: limiters.authProtected,
      authenticate: credentials.required,
      statusGate: gate.middleware,
      directScopeVersion: () => scopeVersion.value,
    }),
  );
  app.use(routeNotFound);
  app.use(errorHandler);
  return {
    app,
    ctx,
    db,
    redis,
    outbox,
    mailer,
    scopeVersion,
    async close() {
      await mailer.close();
      redis.disconnect();
      await db.destroy();
      await fs.rm(outbox, { recursive: true, force: true });
    },
  };
}

export function uniqueEmail(tag = 'user'): string {
  return `${tag}-${crypto.randomBytes(5).toString('hex')}@example.test`;
}

/** Newest outbox mail of a kind for an address: its .txt (subject, To, link) parsed. */
export async function lastMail(outbox: string, to: string, kind: string): Promise<{ link: string; token: string; file: string } | null> {
  const files = (await fs.readdir(outbox)).filter((f) => f.endsWith('.txt') && f.includes(`-${kind}-`) && f.includes(to)).sort();
  const f = files.at(-1);
  if (!f) return null;
  const txt = await fs.readFile(path.join(outbox, f), 'utf8');
  const link = txt.trim().split('\n').at(-1) ?? '';
  const token = new URL(link).searchParams.get('token') ?? '';
  return { link, token, file: path.join(outbox, f) };
}

export async function mailCount(outbox: string, to: string, kind?: string): Promise<number> {
  return (await fs.readdir(outbox)).filter((f) => f.endsWith('.eml') && f.includes(to) && (!kind || f.includes(`-${kind}-`))).length;
}


/** Signs up, verifies, sets the admin password from the welcome mail; returns what a client would hold. */
export async function activeAccount(h: Harness, email = uniqueEmail()): Promise<{ email: string; password: string; customerId: string; accesskey: string; token: string }> {
  const s = await request(h.app).post('/auth/signup').send({ email, accepted_tos: true });
  if (s.status !== 200 || !s.body.customer) throw new Error(`signup failed ${s.status}`);
  const v = await lastMail(h.outbox, email, 'verification');
  const ok = await request(h.app).post('/auth/email-verify').send({ token: v!.token });
  if (ok.status !== 200) throw new Error(`verify failed ${ok.status}`);
  const w = await lastMail(h.outbox, email, 'welcome');
  const password = 'pw-' + crypto.randomBytes(6).toString('hex');
  const r = await request(h.app).post('/auth/password-reset').send({ token: w!.token, password });
  if (r.status !== 200) throw new Error(`password set failed ${r.status}`);
  const l = await request(h.app).post('/auth/login').send({ username: email, password });
  if (l.status !== 200) throw new Error(`login failed ${l.status}`);
  return { email, password, customerId: s.body.customer.id, accesskey: s.body.accesskey.token, token: l.body.token };
}

/** Asserts a bare response: the status and nothing in the body at all. */
export function expectBare(res: request.Response, status = 400): void {
  if (res.status !== status) throw new Error(`expected bare ${status}, got ${res.status} ${res.text}`);
  if ((res.text ?? '') !== '') throw new Error(`expected an empty body, got ${JSON.stringify(res.text)}`);
  if (res.headers['content-length'] !== undefined && res.headers['content-length'] !== '0') throw new Error('content-length not 0');
}
