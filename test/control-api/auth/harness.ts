// The real control-api app (testkit/api.ts: real Postgres database of this process, real Redis,
// the shared middlewares) with the auth group mounted; mail goes to a temp outbox (or SMTP).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import type express from 'express';
import request from 'supertest';
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import type { AppContext } from '../../../control-api/context';
import { authRouter, authDepsFromMount } from '../../../control-api/auth';
import { buildTestApp, type TestApp } from '../../../testkit/api';

export interface Harness {
  app: express.Express;
  ctx: AppContext;
  t: TestApp;
  db: Knex;
  redis: Redis;
  outbox: string;
  scopeVersion: { value: number };
  close(): Promise<void>;
}

export function testUrls(): { redis: string } {
  const redis = process.env.TEST_REDIS_URL;
  if (!redis) throw new Error('TEST_REDIS_URL is not set: run `source .data/env`');
  return { redis };
}

/** rateLimitScale 0 (default here) switches the per-IP limits off; the rate-limit suite uses 1. */
export async function startHarness(opts: { rateLimitScale?: number; smtpUrl?: string } = {}): Promise<Harness> {
  const outbox = await fs.mkdtemp(path.join(os.tmpdir(), 'auth-outbox-'));
  const scopeVersion = { value: 1 };
  const t = await buildTestApp({
    env: { OUTBOX_DIR: outbox, SMTP_URL: opts.smtpUrl ?? '', RATE_LIMIT_SCALE: String(opts.rateLimitScale ?? 0) },
    app: {
      checkDirect: async (c) => c.scope_version === scopeVersion.value,
      authRouter: (m) => authRouter({ ...authDepsFromMount(m), directScopeVersion: () => scopeVersion.value }),
    },
  });
  return {
    app: t.app,
    ctx: t.ctx,
    t,
    db: t.ctx.db,
    redis: t.ctx.redis,
    outbox,
    scopeVersion,
    async close() {
      await t.close();
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
