import { expect } from 'chai';
import request from 'supertest';
import { z } from 'zod';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { Router } from 'express';
import { defineRoute } from '../../control-api/route';
import { createApp } from '../../control-api/app';

function expectEnvelope(res: request.Response, http: number, status: string, reason: string) {
  expect(res.status, JSON.stringify(res.body)).to.equal(http);
  expect(res.headers['content-type']).to.match(/application\/json/);
  expect(res.body.error).to.be.an('object');
  expect(res.body.error.status).to.equal(status);
  expect(res.body.error.reason).to.equal(reason);
  expect(res.body.error.message).to.be.a('string').and.not.empty;
  expect(res.body.error.request_id).to.equal(res.headers['x-request-id']);
}

// A test-only route exercising every validation class (required fields, nested types, query params).
const probe = defineRoute({
  method: 'post',
  path: '/probe/:id',
  tag: 'Test',
  summary: 'validation probe',
  permission: 'agent',
  params: z.object({ id: z.guid() }),
  query: z.object({ mode: z.enum(['a', 'b']), n: z.coerce.number().int().optional() }),
  body: z.strictObject({ name: z.string().max(10), count: z.number().int(), tags: z.array(z.string()).optional() }),
  response: z.object({ ok: z.boolean() }),
  handler: async ({ body }) => ({ ok: true, name: body.name }),
});

describe('control-api: error envelope, request id and bad input', () => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await buildTestApp({ env: { BODY_LIMIT_BYTES: '2048' } });
  });
  beforeEach(async () => {
    await truncateAll();
    f = await createFixture(t.ctx);
  });
  after(async () => t.close());

  it('generates a request id, or echoes a valid incoming one', async () => {
    const a = await request(t.app).get('/v1.0/customer');
    expect(a.headers['x-request-id']).to.match(/^req_[A-Z2-7]{26}$/);
    expectEnvelope(a, 401, 'UNAUTHENTICATED', 'AUTHENTICATION_REQUIRED');
    const b = await request(t.app).get('/v1.0/customer').set('X-Request-Id', 'my-trace_01');
    expect(b.headers['x-request-id']).to.equal('my-trace_01');
    expect(b.body.error.request_id).to.equal('my-trace_01');
    const c = await request(t.app).get('/v1.0/customer').set('X-Request-Id', 'bad id with spaces');
    expect(c.headers['x-request-id']).to.match(/^req_/);
    const ok = await request(t.app).get('/v1.0/customer').query({ accesskey: f.accesskey });
    expect(ok.status).to.equal(200);
    expect(ok.headers['x-request-id']).to.match(/^req_/);
  });

  it('unknown routes and /v1.0/auth/... answer 404 ROUTE_NOT_FOUND', async () => {
    expectEnvelope(await request(t.app).get('/v1.0/nothing-here'), 404, 'NOT_FOUND', 'ROUTE_NOT_FOUND');
    expectEnvelope(await request(t.app).get('/nothing'), 404, 'NOT_FOUND', 'ROUTE_NOT_FOUND');
    expectEnvelope(await request(t.app).post('/v1.0/auth/login').send({ username: 'a', password: 'b' }), 404, 'NOT_FOUND', 'ROUTE_NOT_FOUND');
    expectEnvelope(await request(t.app).get('/v1.0/auth'), 404, 'NOT_FOUND', 'ROUTE_NOT_FOUND');
    expectEnvelope(await request(t.app).post('/v1.0/auth/signup').query({ accesskey: f.accesskey }).send({}), 404, 'NOT_FOUND', 'ROUTE_NOT_FOUND');
  });

  it('malformed JSON → 400 INVALID_JSON_BODY', async () => {
    const res = await request(t.app).post('/v1.0/accesskeys').query({ accesskey: f.accesskey }).set('Content-Type', 'application/json').send('{"name": ');
    expectEnvelope(res, 400, 'INVALID_ARGUMENT', 'INVALID_JSON_BODY');
    const scalar = await request(t.app).post('/v1.0/accesskeys').query({ accesskey: f.accesskey }).set('Content-Type', 'application/json').send('"x"');
    expectEnvelope(scalar, 400, 'INVALID_ARGUMENT', 'INVALID_JSON_BODY');
  });

  it('a body that is not application/json → 400', async () => {
    const res = await request(t.app).post('/v1.0/accesskeys').query({ accesskey: f.accesskey }).set('Content-Type', 'text/plain').send('name=x');
    expectEnvelope(res, 400, 'INVALID_ARGUMENT', 'INVALID_JSON_BODY');
  });

  it('oversized body → 400 naming the limit, nothing written', async () => {
    const res = await request(t.app)
      .post('/v1.0/accesskeys')
      .query({ accesskey: f.accesskey })
      .send({ name: 'x', detail: 'y'.repeat(4000) });
    expectEnvelope(res, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT');
    expect(res.body.error.details[0].limit_bytes).to.equal(2048);
    const n = await t.ctx.db('accesskeys').count({ n: '*' });
    expect(Number(n[0].n)).to.equal(1);
  });

  it('oversized strings, wrong types, unknown fields → 400 INVALID_ARGUMENT naming the field', async () => {
    const long = await request(t.app)
      .post('/v1.0/accesskeys')
      .query({ accesskey: f.accesskey })
      .send({ name: 'n'.repeat(256) });
    expectEnvelope(long, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT');
    expect(long.body.error.details[0].field).to.equal('name');
    const wrong = await request(t.app).post('/v1.0/accesskeys').query({ accesskey: f.accesskey }).send({ expire: '3600' });
    expectEnvelope(wrong, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT');
    expect(wrong.body.error.details[0].field).to.equal('expire');
    const unknown = await request(t.app).post('/v1.0/accesskeys').query({ accesskey: f.accesskey }).send({ name: 'a', colour: 'red' });
    expectEnvelope(unknown, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT');
    expect(unknown.body.error.details).to.deep.include({ field: 'colour', issue: 'unknown field' });
    const arr = await request(t.app).post('/v1.0/accesskeys').query({ accesskey: f.accesskey }).send([1, 2]);
    expectEnvelope(arr, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT');
    const enumBad = await request(t.app).put('/v1.0/customer').query({ accesskey: f.accesskey }).send({ webhook_method: 'PATCH' });
    expectEnvelope(enumBad, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT');
    expect(enumBad.body.error.details[0].field).to.equal('webhook_method');
    const n = await t.ctx.db('accesskeys').count({ n: '*' });
    expect(Number(n[0].n)).to.equal(1);
  });

  it('non-UUID ids → 400 INVALID_ID', async () => {
    for (const path of ['/v1.0/accesskeys/123', '/v1.0/outbound_configs/not-a-uuid', "/v1.0/accesskeys/'%20or%201=1"]) {
      expectEnvelope(await request(t.app).get(path).query({ accesskey: f.accesskey }), 400, 'INVALID_ARGUMENT', 'INVALID_ID');
    }
    expectEnvelope(await request(t.app).delete('/v1.0/accesskeys/zz').query({ accesskey: f.accesskey }), 400, 'INVALID_ARGUMENT', 'INVALID_ID');
  });

  it('missing, wrong-typed and unknown fields through a route defined with defineRoute', async () => {
    const app = createApp(t.ctx, { routes: [probe], cacheTtlMs: 0, authRouter: () => Router() }).app;
    const id = '6f1c2f0e-4b7a-4d3e-9a51-2c0b8e1d7f00';
    const q = { accesskey: f.accesskey, mode: 'a' };
    expect((await request(app).post(`/v1.0/probe/${id}`).query(q).send({ name: 'x', count: 1 })).status).to.equal(200);
    const missing = await request(app).post(`/v1.0/probe/${id}`).query(q).send({ name: 'x' });
    expectEnvelope(missing, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT');
    expect(missing.body.error.details).to.deep.include({ field: 'count', issue: 'required' });
    const nested = await request(app)
      .post(`/v1.0/probe/${id}`)
      .query(q)
      .send({ name: 'x', count: 1, tags: ['a', 2] });
    expect(nested.body.error.details[0].field).to.equal('tags.1');
    const noQuery = await request(app).post(`/v1.0/probe/${id}`).query({ accesskey: f.accesskey }).send({ name: 'x', count: 1 });
    expectEnvelope(noQuery, 400, 'INVALID_ARGUMENT', 'MISSING_REQUEST_PARAMETER');
    const badQuery = await request(app)
      .post(`/v1.0/probe/${id}`)
      .query({ ...q, n: 'abc' })
      .send({ name: 'x', count: 1 });
    expectEnvelope(badQuery, 400, 'INVALID_ARGUMENT', 'INVALID_REQUEST_PARAMETER');
    const badId = await request(app).post('/v1.0/probe/nope').query(q).send({ name: 'x', count: 1 });
    expectEnvelope(badId, 400, 'INVALID_ARGUMENT', 'INVALID_ID');
    const noBody = await request(app).post(`/v1.0/probe/${id}`).query(q);
    expectEnvelope(noBody, 400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT');
  });

  it('a rawBody route gets the unread request stream (uploads), documented with its content types', async () => {
    const upload = defineRoute({
      method: 'post',
      path: '/upload',
      tag: 'Test',
      summary: 'raw upload probe',
      permission: 'agent',
      rawBody: true,
      contentTypes: ['application/octet-stream'],
      response: z.object({ bytes: z.number() }),
      handler: async ({ req }) => {
        let n = 0;
        for await (const chunk of req) n += (chunk as Buffer).length;
        return { bytes: n };
      },
    });
    const p = createApp(t.ctx, { routes: [upload], cacheTtlMs: 0, authRouter: () => Router() });
    const big = Buffer.alloc(5000, 1); // larger than this app's JSON limit (2048)
    const res = await request(p.app).post('/v1.0/upload').query({ accesskey: f.accesskey }).set('Content-Type', 'application/octet-stream').send(big);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.bytes).to.equal(5000);
    const doc = p.openapi as { paths: Record<string, Record<string, { requestBody: { content: Record<string, unknown> } }>> };
    expect(Object.keys(doc.paths['/upload'].post.requestBody.content)).to.deep.equal(['application/octet-stream']);
    expect((await request(p.app).post('/v1.0/upload').send(big)).status).to.equal(401);
  });

  it('bad page_size / page_token → 400 INVALID_REQUEST_PARAMETER', async () => {
    expectEnvelope(await request(t.app).get('/v1.0/accesskeys').query({ accesskey: f.accesskey, page_size: 'ten' }), 400, 'INVALID_ARGUMENT', 'INVALID_REQUEST_PARAMETER');
    expectEnvelope(await request(t.app).get('/v1.0/accesskeys').query({ accesskey: f.accesskey, page_token: 'yesterday' }), 400, 'INVALID_ARGUMENT', 'INVALID_REQUEST_PARAMETER');
  });
});
