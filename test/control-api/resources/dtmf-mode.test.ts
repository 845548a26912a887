// dtmf_mode on trunks and extensions (issue #32): rfc4733 by default, info or inband on create and
// update, anything else a 400 in the error envelope that names the field and changes nothing; the
// OpenAPI document shows the field with its values on the resources and their request bodies.
import { expect } from 'chai';
import request from 'supertest';
import { as, type Harness, type Actors, useHarness } from './support';

type Json = Record<string, any>;

describe('dtmf_mode on trunks and extensions', function () {
  let h: Harness;
  let a: Actors;

  useHarness((x, y) => ((h = x), (a = y)));

  const bad = ['rfc2833', 'INFO', '', 'info ', 4733, null, ['info']];

  it('trunks: rfc4733 by default, info on create, inband on update, bad values refused with 400 and nothing changed', async () => {
    const api = as(h, a.admin);
    const t = await api.post('/v1.0/trunks').send({ domain_name: 'dtmf-pbx', auth_types: ['ip'], allowed_ips: ['192.0.2.1'] });
    expect(t.status, JSON.stringify(t.body)).to.equal(200);
    expect(t.body.dtmf_mode).to.equal('rfc4733');
    const i = await api.post('/v1.0/trunks').send({ domain_name: 'dtmf-pbx2', auth_types: ['ip'], allowed_ips: ['192.0.2.2'], dtmf_mode: 'info' });
    expect(i.body.dtmf_mode).to.equal('info');
    expect((await api.put(`/v1.0/trunks/${t.body.id}`).send({ dtmf_mode: 'inband' })).body.dtmf_mode).to.equal('inband');
    for (const v of bad) {
      const r = await api.put(`/v1.0/trunks/${t.body.id}`).send({ dtmf_mode: v, name: 'renamed' });
      expect(r.status, JSON.stringify(v)).to.equal(400);
      expect(
        r.body.error.details.map((d: Json) => d.field),
        JSON.stringify(v),
      ).to.include('dtmf_mode');
      expect(JSON.stringify(r.body.error), JSON.stringify(v)).to.contain('must be one of rfc4733, info, inband');
      expect((await api.post('/v1.0/trunks').send({ domain_name: 'dtmf-bad', auth_types: ['ip'], allowed_ips: ['192.0.2.3'], dtmf_mode: v })).status).to.equal(400);
    }
    const after_ = (await api.get(`/v1.0/trunks/${t.body.id}`)).body;
    expect(after_.dtmf_mode, 'unchanged by the refused updates').to.equal('inband');
    expect(after_.name, 'nothing else of a refused update written').to.equal('');
    expect((await api.get('/v1.0/trunks')).body.result.map((x: Json) => x.domain_name)).to.not.include('dtmf-bad');
  });

  it('extensions: rfc4733 by default, set and changed, bad values refused with 400', async () => {
    const api = as(h, a.manager);
    const e = await api.post('/v1.0/extensions').send({ extension: '3101', dtmf_mode: 'info' });
    expect(e.status, JSON.stringify(e.body)).to.equal(200);
    expect(e.body.dtmf_mode).to.equal('info');
    expect((await api.post('/v1.0/extensions').send({ extension: '3102' })).body.dtmf_mode).to.equal('rfc4733');
    expect((await api.put(`/v1.0/extensions/${e.body.id}`).send({ dtmf_mode: 'inband' })).body.dtmf_mode).to.equal('inband');
    for (const v of bad) {
      const r = await api.put(`/v1.0/extensions/${e.body.id}`).send({ dtmf_mode: v });
      expect(r.status, JSON.stringify(v)).to.equal(400);
      expect(r.body.error.details.map((d: Json) => d.field)).to.include('dtmf_mode');
      expect((await api.post('/v1.0/extensions').send({ extension: '3103', dtmf_mode: v })).status, JSON.stringify(v)).to.equal(400);
    }
    expect((await api.get(`/v1.0/extensions/${e.body.id}`)).body.dtmf_mode).to.equal('inband');
  });

  it('the OpenAPI document lists dtmf_mode with its three values on trunks and extensions', async () => {
    const doc = (await request(h.app).get('/v1.0/openapi.json')).body as Json;
    for (const p of ['/trunks', '/extensions']) {
      const body = doc.paths[p].post.requestBody.content['application/json'].schema;
      expect(body.properties.dtmf_mode.enum, p).to.deep.equal(['rfc4733', 'info', 'inband']);
      expect(body.properties.dtmf_mode.description, p).to.contain('telephone-event');
      const put = doc.paths[`${p}/{id}`].put.requestBody.content['application/json'].schema;
      expect(put.properties.dtmf_mode.enum, `${p}/{id}`).to.deep.equal(['rfc4733', 'info', 'inband']);
    }
  });
});
