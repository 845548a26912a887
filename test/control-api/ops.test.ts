import { expect } from 'chai';
import request from 'supertest';
import { Redis } from 'ioredis';
import { buildTestApp, type TestApp } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { bootstrapAdmin } from '../../control-api/bootstrap';
import { createContext } from '../../control-api/context';
import { createApp } from '../../control-api/app';
import { startMetricsListener } from '../../control-api/ops';
import { repos } from '../../core/repos';
import { verifyPassword } from '../../core/password';
import fs from 'node:fs';
import knexFactory from 'knex';
import { createDb, migrate, MIGRATIONS_DIR } from '../../core/db/knex';

describe('control-api: operations, bootstrap, atomic writes', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(async () => t.close());

  it('/healthz, /readyz (Postgres and Redis), /metrics (on its own listener)', async () => {
    expect((await request(t.app).get('/healthz')).body).to.deep.equal({ status: 'ok' });
    const ready = await request(t.app).get('/readyz');
    expect(ready.status).to.equal(200);
    expect(ready.body).to.deep.equal({ status: 'ok', postgres: 'ok', redis: 'ok' });
    await request(t.app).get('/v1.0/customer');
    const listener = await startMetricsListener(t.platform.metrics, { host: '127.0.0.1', port: 0 });
    const m = await request(`http://127.0.0.1:${listener.address.port}`).get('/metrics');
    await listener.close();
    expect(m.status).to.equal(200);
    expect(m.text).to.match(/http_requests_total\{method="GET",route="unmatched",status="401"\} 1|http_requests_total\{[^}]*status="401"[^}]*\} 1/);
    expect(m.text).to.include('http_request_duration_seconds_bucket');
  });

  it('/readyz answers 503 when Redis is unreachable', async () => {
    const dead = new Redis('redis://127.0.0.1:1/0', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    dead.on('error', () => undefined);
    const ctx = createContext({ config: t.ctx.config, db: t.ctx.db, redis: dead, logger: t.ctx.logger });
    const { app } = createApp(ctx, { cacheTtlMs: 0 });
    const res = await request(app).get('/readyz');
    expect(res.status).to.equal(503);
    expect(res.body).to.deep.equal({ status: 'unavailable', postgres: 'ok', redis: 'unreachable' });
    dead.disconnect();
  });

  it('first start creates one admin customer, agent and accesskey, once', async () => {
    await truncateAll();
    const config = { ...t.ctx.config, bootstrapAdminUsername: 'root' };
    const [a, b] = await Promise.all([bootstrapAdmin(t.ctx.db, config), bootstrapAdmin(t.ctx.db, config)]);
    const boot = a ?? b;
    expect([a, b].filter(Boolean)).to.have.length(1);
    expect(boot!.username).to.equal('root');
    const agent = await t.ctx.repos.agents.getByUsername('root');
    expect(await verifyPassword(boot!.password, agent!.password_hash)).to.equal(true);
    const res = await request(t.app).get('/v1.0/customer').query({ accesskey: boot!.accesskey });
    expect(res.status).to.equal(200);
    expect(res.body.status).to.equal('active');
    expect(fs.readFileSync(boot!.file, 'utf8')).to.include(`accesskey=${boot!.accesskey}`);
    expect(await bootstrapAdmin(t.ctx.db, config)).to.equal(null);
  });

  it('two processes migrating a fresh database at once both succeed', async () => {
    const base = process.env.TEST_DATABASE_URL!;
    const name = `platform_test_mig_${process.pid}`;
    const admin = knexFactory({ client: 'pg', connection: base, pool: { min: 0, max: 1 } });
    await admin.raw('drop database if exists ?? with (force)', [name]);
    await admin.raw('create database ??', [name]);
    const u = new URL(base);
    u.pathname = '/' + name;
    const a = createDb(u.toString(), { poolMax: 2 });
    const b = createDb(u.toString(), { poolMax: 2 });
    try {
      const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
      expect(ra.length + rb.length).to.equal(fs.readdirSync(MIGRATIONS_DIR).filter((f) => /\.(ts|js)$/.test(f)).length);
      expect(await migrate(a)).to.deep.equal([]);
    } finally {
      await a.destroy();
      await b.destroy();
      await admin.raw('drop database if exists ?? with (force)', [name]).catch(() => undefined);
      await admin.destroy();
    }
  });

  it('a multi-row create that fails half-way leaves nothing behind', async () => {
    await truncateAll();
    await t.ctx.repos.agents.create({ customer_id: (await t.ctx.repos.customers.create({ email: 'x@example.test' })).id, username: 'taken', permission: 32 });
    let failed = false;
    try {
      await t.ctx.db.transaction(async (trx) => {
        const r = repos(trx);
        const c = await r.customers.create({ email: 'new@example.test' });
        await r.accesskeys.create({ customer_id: c.id });
        await r.agents.create({ customer_id: c.id, username: 'TAKEN', permission: 32 }); // unique (case-insensitive)
      });
    } catch {
      failed = true;
    }
    expect(failed).to.equal(true);
    expect(await t.ctx.repos.customers.getByEmail('new@example.test')).to.equal(null);
    expect(Number((await t.ctx.db('accesskeys').count({ n: '*' }))[0].n)).to.equal(0);
    // Email is unique among live customers, case-insensitively, and free again once deleted.
    const dup = await t.ctx.repos.customers.create({ email: 'X@example.test' }).then(
      () => 'created',
      () => 'refused',
    );
    expect(dup).to.equal('refused');
    const old = await t.ctx.repos.customers.getByEmail('x@example.test');
    await t.ctx.repos.customers.softDelete(old!.id);
    expect((await t.ctx.repos.customers.create({ email: 'x@example.test' })).email).to.equal('x@example.test');
  });
});
