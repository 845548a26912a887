/** Shared set-up of the flows and calls suites: one app, a fresh fixture per test. */
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../../testkit/api';
import { truncateAll } from '../../../testkit/db';
import { closeCommandBus } from '../../../control-api/calls/bus';

export { request };

export async function startApp(): Promise<TestApp> {
  return buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
}

export async function stopApp(t: TestApp): Promise<void> {
  await closeCommandBus(t.ctx);
  await t.close();
}

export async function freshFixture(t: TestApp): Promise<Fixture> {
  await truncateAll(t.ctx.db);
  return createFixture(t.ctx);
}

/** supertest helpers authenticated as the fixture's admin (accesskey). */
export function api(t: TestApp, f: Fixture) {
  const q = { accesskey: f.accesskey };
  return {
    get: (p: string) => request(t.app).get(`/v1.0${p}`).query(q),
    post: (p: string, body?: object) => (body === undefined ? request(t.app).post(`/v1.0${p}`).query(q) : request(t.app).post(`/v1.0${p}`).query(q).send(body)),
    put: (p: string, body: object) => request(t.app).put(`/v1.0${p}`).query(q).send(body),
    del: (p: string, body?: object) => (body === undefined ? request(t.app).delete(`/v1.0${p}`).query(q) : request(t.app).delete(`/v1.0${p}`).query(q).send(body)),
  };
}
