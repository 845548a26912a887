// The real control-api app (testkit/api.ts: this process's Postgres database, real Redis) with
// rate limits off, and fixtures per permission level.
import type express from 'express';
import request from 'supertest';
import { buildTestApp, createFixture, createAgent, type TestApp, type Fixture } from '../../../testkit/api';
import { truncateAll } from '../../../testkit/db';
import { Permission, PERMISSION_BY_NAME } from '../../../core/permissions';
import { clock } from '../../../core/clock';

export interface Harness {
  t: TestApp;
  app: express.Express;
  close(): Promise<void>;
}

export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', SIP_DOMAIN: 'sip.example.test', PUBLIC_URL: 'https://pbx.example.test', ...env } });
  // control-api/app.ts mounts control-api/provisioning/router.ts at /provisioning (outside /v1.0).
  return { t, app: t.platform.app, close: () => t.close() };
}

export interface Actors {
  fx: Fixture;
  customerId: string;
  /** Login tokens by level, all in the same customer. */
  admin: string;
  manager: string;
  agent: string;
}

export async function actors(h: Harness): Promise<Actors> {
  const fx = await createFixture(h.t.ctx);
  const manager = await createAgent(h.t.ctx, fx.customer.id, Permission.CustomerManager);
  const agent = await createAgent(h.t.ctx, fx.customer.id, Permission.CustomerAgent);
  return { fx, customerId: fx.customer.id, admin: fx.token, manager: manager.token, agent: agent.token };
}

/** A customer whose admin is also the platform's ProjectSuperAdmin. */
export async function superAdmin(h: Harness): Promise<Fixture> {
  return createFixture(h.t.ctx, { permission: PERMISSION_BY_NAME.ProjectSuperAdmin });
}

export async function reset(): Promise<void> {
  clock.reset();
  await truncateAll();
}

/** supertest with a bearer token. */
export function as(h: Harness, token: string) {
  const r = request(h.app);
  const auth = (req: request.Test) => req.set('Authorization', `Bearer ${token}`);
  return {
    get: (p: string) => auth(r.get(p)),
    post: (p: string) => auth(r.post(p)),
    put: (p: string) => auth(r.put(p)),
    delete: (p: string) => auth(r.delete(p)),
  };
}

export const EMPTY = '00000000-0000-0000-0000-000000000000';

/**
 * Mocha hooks: the harness for the suite, and before each test a reset database with fresh actors (and,
 * with `superAdmin`, a ProjectSuperAdmin's customer); `set` receives them.
 */
export function useHarness(set: (h: Harness, a: Actors, su: Fixture) => void, opts: { superAdmin?: boolean } = {}): void {
  let h: Harness | undefined;
  before(async () => {
    h = await startHarness();
  });
  after(async () => h?.close());
  beforeEach(async () => {
    await reset();
    const a = await actors(h!);
    set(h!, a, opts.superAdmin ? await superAdmin(h!) : (undefined as unknown as Fixture));
  });
}
