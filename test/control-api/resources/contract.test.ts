// Every response of this group matches the zod response schema its route declares (the same schema
// /v1.0/openapi.json publishes), and the OpenAPI document lists the group's paths.
import { expect } from 'chai';
import request from 'supertest';
import { startHarness, actors, reset, as, superAdmin, type Harness } from './support';
import type { AnyRoute } from '../../../control-api/route';

describe('resources contract', function () {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    await reset();
  });
  after(async () => h.close());

  function schemaOf(method: string, path: string): AnyRoute['response'] {
    const def = h.t.platform.routes.find((r) => r.method === method && r.path === path);
    if (!def) throw new Error(`no route ${method} ${path}`);
    return def.response;
  }
  function conforms(method: string, path: string, body: unknown): void {
    const r = schemaOf(method, path).safeParse(body);
    expect(r.success, `${method} ${path}: ${r.success ? '' : JSON.stringify(r.error.issues)}`).to.equal(true);
  }

  it('responses match the declared schemas', async () => {
    const a = await actors(h);
    const su = await superAdmin(h);
    const api = as(h, a.admin);
    const sa = as(h, su.token);
    const calls: [string, string, request.Response][] = [];
    const rec = async (method: string, path: string, p: Promise<request.Response>) => {
      const res = await p;
      expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).to.equal(200);
      calls.push([method, path, res]);
      return res.body;
    };
    const num = await rec('post', '/numbers', api.post('/v1.0/numbers').send({ number: '+899321000001' }));
    await rec('get', '/numbers', api.get('/v1.0/numbers'));
    await rec('get', '/numbers/:id', api.get(`/v1.0/numbers/${num.id}`));
    await rec('put', '/numbers/:id', api.put(`/v1.0/numbers/${num.id}`).send({ name: 'n' }));
    await rec('get', '/available_numbers', api.get('/v1.0/available_numbers').query({ type: 'virtual' }));
    await rec('get', '/available_numbers', api.get('/v1.0/available_numbers').query({ country_code: 'GB', page_size: '2' }));
    await rec('post', '/numbers/renew', api.post('/v1.0/numbers/renew').send({ tm_renew: '2999-01-01T00:00:00Z' }));
    await rec('delete', '/numbers/:id', api.delete(`/v1.0/numbers/${num.id}`));
    const ext = await rec('post', '/extensions', api.post('/v1.0/extensions').send({ extension: '100', password: 'secret-pass-1' }));
    await rec('get', '/extensions', api.get('/v1.0/extensions'));
    await rec('get', '/extensions/:id', api.get(`/v1.0/extensions/${ext.id}`));
    await rec('put', '/extensions/:id', api.put(`/v1.0/extensions/${ext.id}`).send({ name: 'x' }));
    await rec('post', '/extensions/:id/direct-hash-regenerate', api.post(`/v1.0/extensions/${ext.id}/direct-hash-regenerate`));
    await rec('post', '/extensions/:id/provisioning-token', api.post(`/v1.0/extensions/${ext.id}/provisioning-token`));
    await rec('delete', '/extensions/:id', api.delete(`/v1.0/extensions/${ext.id}`));
    const prov = await rec('post', '/providers', sa.post('/v1.0/providers').send({ hostname: 'gw.example' }));
    await rec('get', '/providers', sa.get('/v1.0/providers'));
    await rec('get', '/providers/:id', sa.get(`/v1.0/providers/${prov.id}`));
    await rec('put', '/providers/:id', sa.put(`/v1.0/providers/${prov.id}`).send({ name: 'p' }));
    const route = await rec('post', '/routes', sa.post('/v1.0/routes').send({ customer_id: a.customerId, provider_id: prov.id, target: 'all' }));
    await rec('get', '/routes', sa.get('/v1.0/routes'));
    await rec('get', '/routes/:id', sa.get(`/v1.0/routes/${route.id}`));
    await rec('put', '/routes/:id', sa.put(`/v1.0/routes/${route.id}`).send({ priority: 2 }));
    await rec('delete', '/routes/:id', sa.delete(`/v1.0/routes/${route.id}`));
    await rec('delete', '/providers/:id', sa.delete(`/v1.0/providers/${prov.id}`));
    const trunk = await rec('post', '/trunks', api.post('/v1.0/trunks').send({ domain_name: 'c1', auth_types: ['basic'], username: 'u', password: 'secret-pass-1' }));
    await rec('get', '/trunks', api.get('/v1.0/trunks'));
    await rec('get', '/trunks/:id', api.get(`/v1.0/trunks/${trunk.id}`));
    await rec('put', '/trunks/:id', api.put(`/v1.0/trunks/${trunk.id}`).send({ name: 't' }));
    await rec('delete', '/trunks/:id', api.delete(`/v1.0/trunks/${trunk.id}`));
    const accs = await rec('get', '/billing-accounts', api.get('/v1.0/billing-accounts'));
    await rec('get', '/billing-accounts/:id', api.get(`/v1.0/billing-accounts/${accs.result[0].id}`));
    await rec('post', '/billing-accounts/:id/balance-add', sa.post(`/v1.0/billing-accounts/${accs.result[0].id}/balance-add`).send({ balance: 1 }));
    const bills = await rec('get', '/billings', api.get('/v1.0/billings'));
    await rec('get', '/billings/:id', api.get(`/v1.0/billings/${bills.result[0].id}`));
    for (const [method, path, res] of calls) conforms(method, path, res.body);
  });

  it('the OpenAPI document lists the group', async () => {
    const r = await request(h.app).get('/v1.0/openapi.json');
    expect(r.status).to.equal(200);
    for (const p of [
      '/numbers',
      '/numbers/renew',
      '/numbers/{id}',
      '/available_numbers',
      '/extensions',
      '/extensions/{id}',
      '/extensions/{id}/direct-hash-regenerate',
      '/extensions/{id}/provisioning-token',
      '/providers',
      '/providers/{id}',
      '/trunks',
      '/trunks/{id}',
      '/routes',
      '/routes/{id}',
      '/billing-accounts',
      '/billing-accounts/{id}',
      '/billing-accounts/{id}/balance-add',
      '/billings',
      '/billings/{id}',
    ]) {
      expect(r.body.paths, p).to.have.property(p);
    }
    expect(r.body.paths['/providers'].post['x-permission']).to.equal('superadmin');
  });
});
