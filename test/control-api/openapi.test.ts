import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { Permission } from '../../core/permissions';
import { openApiPath } from '../../control-api/openapi';
import { customerSchema, accesskeySchema, agentSchema, outboundConfigSchema } from '../../control-api/routes/schemas';

type Json = Record<string, any>;

describe('openapi.json: generated from the route definitions that validate', () => {
  let t: TestApp;
  let f: Fixture;
  let doc: Json;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    await truncateAll();
    f = await createFixture(t.ctx);
    const res = await request(t.app).get('/v1.0/openapi.json');
    expect(res.status).to.equal(200);
    doc = res.body;
  });
  after(async () => t.close());

  it('is served without credentials, version 1.0.0, with the four credential schemes', () => {
    expect(doc.openapi).to.match(/^3\./);
    expect(doc.info.version).to.equal('1.0.0');
    expect(Object.keys(doc.components.securitySchemes).sort()).to.deep.equal(['accesskey', 'bearer', 'tokenCookie', 'tokenQuery']);
    expect(doc.components.securitySchemes.accesskey).to.deep.equal({ type: 'apiKey', in: 'query', name: 'accesskey' });
  });

  it('documents every mounted route, and only those', () => {
    const documented = Object.entries(doc.paths as Json).flatMap(([p, ops]) => Object.keys(ops as Json).map((m) => `${m} ${p}`));
    const mounted = t.platform.routes.map((r) => `${r.method} ${openApiPath(r.path)}`);
    expect(documented.sort()).to.deep.equal([...new Set(mounted)].sort());
    for (const want of [
      'get /accesskeys',
      'post /accesskeys',
      'get /accesskeys/{id}',
      'put /accesskeys/{id}',
      'delete /accesskeys/{id}',
      'get /customer',
      'put /customer',
      'get /me',
      'get /outbound_configs',
      'post /outbound_configs',
      'get /outbound_configs/{id}',
      'put /outbound_configs/{id}',
      'delete /outbound_configs/{id}',
    ]) {
      expect(documented).to.include(want);
    }
  });

  it('request bodies are closed objects whose properties the API accepts, and an undocumented field is refused', async () => {
    const sa = await createFixture(t.ctx, { permission: Permission.ProjectSuperAdmin | Permission.CustomerAdmin });
    for (const r of t.platform.routes.filter((x) => x.body && !x.rawBody && !x.params && x.permission !== 'public')) {
      const op = doc.paths[openApiPath(r.path)][r.method];
      const schema = op.requestBody.content['application/json'].schema;
      expect(schema.type, `${r.method} ${r.path}`).to.equal('object');
      expect(schema.additionalProperties, `${r.method} ${r.path}`).to.equal(false);
      const res = await request(t.app)[r.method](`/v1.0${r.path}`).query({ token: sa.token }).send({ __undocumented__: 1 });
      expect(res.status, `${r.method} ${r.path}`).to.equal(400);
      expect(res.body.error.details.map((d: Json) => d.field)).to.include('__undocumented__');
    }
    const post = doc.paths['/accesskeys'].post.requestBody.content['application/json'].schema;
    expect(Object.keys(post.properties).sort()).to.deep.equal(['detail', 'expire', 'name']);
    expect(post.properties.expire.type).to.equal('integer');
    expect(post.properties.name.maxLength).to.equal(255);
    // The documented limits are the enforced ones.
    expect(
      (
        await request(t.app)
          .post('/v1.0/accesskeys')
          .query({ accesskey: f.accesskey })
          .send({ name: 'x'.repeat(post.properties.name.maxLength) })
      ).status,
    ).to.equal(200);
    expect(
      (
        await request(t.app)
          .post('/v1.0/accesskeys')
          .query({ accesskey: f.accesskey })
          .send({ name: 'x'.repeat(post.properties.name.maxLength + 1) })
      ).status,
    ).to.equal(400);
    const wl = doc.paths['/outbound_configs'].post.requestBody.content['application/json'].schema.properties.destination_whitelist;
    expect(wl.items.pattern).to.equal('^[a-z]{2}$');
  });

  it('path ids are documented as UUIDs and list routes carry page_size/page_token', () => {
    const get = doc.paths['/accesskeys/{id}'].get;
    expect(get.parameters[0]).to.include({ name: 'id', in: 'path', required: true });
    expect(get.parameters[0].schema.format).to.equal('uuid');
    const names = doc.paths['/outbound_configs'].get.parameters.map((p: Json) => p.name);
    expect(names).to.include.members(['page_size', 'page_token']);
  });

  it('responses match their documented schemas', async () => {
    const q = { accesskey: f.accesskey };
    customerSchema.strict().parse((await request(t.app).get('/v1.0/customer').query(q)).body);
    accesskeySchema.strict().parse((await request(t.app).post('/v1.0/accesskeys').query(q).send({ name: 'doc' })).body);
    accesskeySchema.strict().parse((await request(t.app).get(`/v1.0/accesskeys/${f.accesskeyRow.id}`).query(q)).body);
    outboundConfigSchema.strict().parse((await request(t.app).get(`/v1.0/outbound_configs/${f.outboundConfig.id}`).query(q)).body);
    agentSchema.strict().parse((await request(t.app).get('/v1.0/me').query({ token: f.token })).body);
  });
});
