/**
 * The /v1.0 front (route.ts groupDispatch) answers exactly what the plain mount of every group
 * answered: the same route for the exact segment, and Express's own matching (case, trailing slash,
 * encoding, absolute-form targets, OPTIONS, unknown groups, the v1 router's own paths) for the rest;
 * the metrics label still names the route. Passes on the code before the change too (it pins the
 * behaviour the change keeps).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Router } from 'express';
import request from 'supertest';
import { useTestApp, buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';

/** One raw request (supertest cannot send an absolute-form target). */
function raw(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('control-api /v1.0 group dispatch', function () {
  this.timeout(20_000);
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));

  const get = (path: string) => request(t.app).get(path).query({ accesskey: f.accesskey });

  it('serves a group route by its exact segment, with and without a trailing slash or sub-path', async () => {
    expect((await get('/v1.0/customer')).body.id).to.equal(f.customer.id);
    expect((await get('/v1.0/customer/')).body.id).to.equal(f.customer.id);
    expect((await get('/V1.0/customer')).body.id).to.equal(f.customer.id);
    expect((await get(`/v1.0/agents/${f.admin.id}`)).body.id).to.equal(f.admin.id);
  });

  it('keeps Express matching for what the lookup does not decide: case, encoding, unknown groups', async () => {
    expect((await get('/v1.0/Customer')).body.id).to.equal(f.customer.id); // case-insensitive, as before
    const encoded = await get('/v1.0/cust%6Fmer');
    expect(encoded.status).to.equal(404);
    expect(encoded.body.reason ?? encoded.body.error?.reason ?? JSON.stringify(encoded.body)).to.match(/ROUTE_NOT_FOUND|not found/i);
    expect((await get('/v1.0/customerx')).status).to.equal(404);
    expect((await get('/v1.0/nosuchgroup/x')).status).to.equal(404);
    // A group's segment with a path or method none of its routes has: the same 404, naming the full path.
    const sub = await get('/v1.0/customer/nope');
    expect(sub.status).to.equal(404);
    expect(sub.body.error.message).to.equal('no route for GET /v1.0/customer/nope');
    const method = await request(t.app).delete('/v1.0/customer').query({ accesskey: f.accesskey });
    expect(method.status).to.equal(404);
    expect(method.body.error.message).to.equal('no route for DELETE /v1.0/customer');
    expect((await get('/v1.0')).status).to.equal(404);
  });

  it("keeps the v1 router's own paths and the mounts after it", async () => {
    expect((await request(t.app).get('/v1.0/openapi.json')).body.openapi).to.be.a('string');
    expect((await request(t.app).post('/v1.0/auth/login').send({})).status).to.equal(404);
    expect((await request(t.app).get('/healthz')).body).to.deep.equal({ status: 'ok' });
  });

  it('OPTIONS lists the methods of the path', async () => {
    const r = await request(t.app).options('/v1.0/customer');
    expect(r.status).to.equal(200);
    expect(r.headers.allow).to.equal('GET, HEAD, PUT');
    expect((await request(t.app).options(`/v1.0/agents/${f.admin.id}`)).headers.allow).to.equal('DELETE, GET, HEAD, PUT');
  });

  it('an absolute-form request target reaches the same route', async () => {
    const server = http.createServer(t.app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const r = await raw(port, `http://127.0.0.1:${port}/v1.0/customer?accesskey=${f.accesskey}`);
      expect(r.status).to.equal(200);
      expect(JSON.parse(r.body).id).to.equal(f.customer.id);
    } finally {
      server.close();
    }
  });

  it('the request metrics name the route (baseUrl + route path)', async () => {
    await get('/v1.0/customer');
    await get(`/v1.0/agents/${f.admin.id}`);
    const text = await t.platform.metrics.registry.metrics();
    expect(text).to.match(/http_requests_total\{method="GET",route="\/v1\.0\/customer",status="200"\}/);
    expect(text).to.match(/http_requests_total\{method="GET",route="\/v1\.0\/agents\/:id",status="200"\}/);
  });
});

describe('control-api /v1.0 routes are registered once', function () {
  this.timeout(20_000);

  it('no route handler is registered on two routers (groupDispatch reuses the group routers)', async () => {
    // Express keeps each registration as a Route; count them by the handler that answers (one per route)
    const routeProto: Record<string, unknown> = Object.getPrototypeOf(Router().route('/probe'));
    const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;
    const originals = new Map(methods.map((m) => [m, routeProto[m]]));
    const registered = new Map<unknown, string[]>();
    for (const m of methods) {
      const original = originals.get(m) as (this: unknown, ...fns: unknown[]) => unknown;
      routeProto[m] = function (this: { path: string }, ...fns: unknown[]) {
        const last = fns.flat().at(-1);
        registered.set(last, [...(registered.get(last) ?? []), this.path]);
        return original.apply(this, fns);
      };
    }
    let t: TestApp | undefined;
    try {
      t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    } finally {
      for (const m of methods) routeProto[m] = originals.get(m);
    }
    try {
      expect(t.platform.routes.length).to.be.above(100);
      // an API route's handler, registered again under its full path (the console registers one page handler on two paths)
      const apiPaths = new Set(t.platform.routes.map((r) => r.path));
      const twice = [...registered.values()].filter((paths) => paths.length > 1 && paths.some((p) => apiPaths.has(p)));
      expect(twice, 'API route handlers registered more than once').to.deep.equal([]);
      expect(registered.size).to.be.at.least(t.platform.routes.length);
      // and the routes still answer through the front
      const f = await createFixture(t.ctx);
      expect((await request(t.app).get('/v1.0/customer').query({ accesskey: f.accesskey })).body.id).to.equal(f.customer.id);
    } finally {
      await t.close();
    }
  });
});
