// codecs on trunks, providers and extensions (issue #34): an ordered list of codec names, wideband first
// by default for extensions (G722, opus, PCMU, PCMA) and G.711 first for trunks and providers; names are
// taken in any case and answered as the engine writes them; an unknown name, a name twice, an empty
// list or a string is a 400 in the error envelope naming the field, and changes nothing. Providers keep
// the reference document's form: a comma-separated string ("" for the default), checked the same way.
import { expect } from 'chai';
import request from 'supertest';
import { as, superAdmin, type Harness, type Actors, useHarness } from './support';
import { testDb } from '../../../testkit/db';

type Json = Record<string, any>;

describe('codecs on trunks, providers and extensions', function () {
  let h: Harness;
  let a: Actors;

  useHarness((x, y) => ((h = x), (a = y)));

  const bad: unknown[] = [['PCMU', 'iLBC'], ['PCMU', 'pcmu'], [], 'PCMU,PCMA', ['G729'], [7], null, ['PCMU', 'PCMA', 'G722', 'opus', 'PCMU']];

  async function refused(r: request.Response, v: unknown): Promise<void> {
    expect(r.status, JSON.stringify(v)).to.equal(400);
    expect(r.body.error, JSON.stringify(r.body)).to.be.an('object');
    expect(
      r.body.error.details.map((d: Json) => String(d.field)),
      JSON.stringify(v),
    ).to.satisfy((f: string[]) => f.some((x) => x.startsWith('codecs')));
  }

  it('trunks: G.711 first by default, set in any case and answered normalised, bad lists refused with 400 and nothing changed', async () => {
    const api = as(h, a.admin);
    const t = await api.post('/v1.0/trunks').send({ domain_name: 'codec-pbx', auth_types: ['ip'], allowed_ips: ['192.0.2.1'] });
    expect(t.status, JSON.stringify(t.body)).to.equal(200);
    expect(t.body.codecs).to.deep.equal(['PCMU', 'PCMA', 'G722', 'opus']);
    const g = await api.post('/v1.0/trunks').send({ domain_name: 'codec-pbx2', auth_types: ['ip'], allowed_ips: ['192.0.2.2'], codecs: ['g722', 'PCMA'] });
    expect(g.body.codecs).to.deep.equal(['G722', 'PCMA']);
    expect((await api.put(`/v1.0/trunks/${t.body.id}`).send({ codecs: ['OPUS', 'pcmu'] })).body.codecs).to.deep.equal(['opus', 'PCMU']);
    for (const v of bad) {
      await refused(await api.put(`/v1.0/trunks/${t.body.id}`).send({ codecs: v, name: 'renamed' }), v);
      await refused(await api.post('/v1.0/trunks').send({ domain_name: 'codec-bad', auth_types: ['ip'], allowed_ips: ['192.0.2.3'], codecs: v }), v);
    }
    const unknown = await api.put(`/v1.0/trunks/${t.body.id}`).send({ codecs: ['PCMU', 'iLBC'] });
    expect(JSON.stringify(unknown.body.error)).to.contain('unknown codec').and.contain('PCMU, PCMA, G722, opus');
    const after_ = (await api.get(`/v1.0/trunks/${t.body.id}`)).body;
    expect(after_.codecs, 'unchanged by the refused updates').to.deep.equal(['opus', 'PCMU']);
    expect(after_.name).to.equal('');
    expect((await api.get('/v1.0/trunks')).body.result.map((x: Json) => x.domain_name)).to.not.include('codec-bad');
  });

  it('extensions: wideband first by default, set and changed, bad lists refused with 400', async () => {
    const api = as(h, a.manager);
    const e = await api.post('/v1.0/extensions').send({ extension: '3401' });
    expect(e.status, JSON.stringify(e.body)).to.equal(200);
    expect(e.body.codecs).to.deep.equal(['G722', 'opus', 'PCMU', 'PCMA']);
    const u = await api.put(`/v1.0/extensions/${e.body.id}`).send({ codecs: ['pcma'] });
    expect(u.status, JSON.stringify(u.body)).to.equal(200);
    expect(u.body.codecs).to.deep.equal(['PCMA']);
    for (const v of bad) {
      await refused(await api.put(`/v1.0/extensions/${e.body.id}`).send({ codecs: v }), v);
      await refused(await api.post('/v1.0/extensions').send({ extension: '3402', codecs: v }), v);
    }
    expect((await api.get(`/v1.0/extensions/${e.body.id}`)).body.codecs).to.deep.equal(['PCMA']);
  });

  it('providers: the reference document\'s comma-separated string, stored as the list; "" is the default; bad strings refused', async () => {
    const api = as(h, (await superAdmin(h)).token);
    const p = await api.post('/v1.0/providers').send({ hostname: 'gw.codecs.example', name: 'c' });
    expect(p.status, JSON.stringify(p.body)).to.equal(200);
    expect(p.body.codecs).to.equal('PCMU,PCMA,G722,opus');
    expect((await api.put(`/v1.0/providers/${p.body.id}`).send({ codecs: 'PCMA, g722' })).body.codecs).to.equal('PCMA,G722');
    const badText: unknown[] = ['PCMU,iLBC', 'PCMU,pcmu', 'G729', ['PCMU'], 7, null, 'x'.repeat(201)];
    for (const v of badText) await refused(await api.put(`/v1.0/providers/${p.body.id}`).send({ codecs: v }), v);
    const unknown = await api.put(`/v1.0/providers/${p.body.id}`).send({ codecs: 'PCMU,G729' });
    expect(JSON.stringify(unknown.body.error)).to.contain('unknown codec').and.contain('PCMU, PCMA, G722, opus');
    expect((await api.get(`/v1.0/providers/${p.body.id}`)).body.codecs).to.equal('PCMA,G722');
    expect((await api.put(`/v1.0/providers/${p.body.id}`).send({ codecs: '' })).body.codecs).to.equal('PCMU,PCMA,G722,opus');
    const db = await testDb();
    const col = await db('information_schema.columns').where({ table_name: 'providers', column_name: 'codecs' }).first();
    expect(col!.data_type).to.equal('ARRAY');
  });

  it('the OpenAPI document lists codecs as an array on trunks and extensions, a string on providers (the reference)', async () => {
    const doc = (await request(h.app).get('/v1.0/openapi.json')).body as Json;
    const prov = doc.paths['/providers'].post.requestBody.content['application/json'].schema.properties.codecs;
    expect(prov.type).to.equal('string');
    expect(prov.description).to.contain('G722');
    expect(doc.paths['/providers/{id}'].put.requestBody.content['application/json'].schema.properties.codecs.type).to.equal('string');
    for (const p of ['/trunks', '/extensions']) {
      const body = doc.paths[p].post.requestBody.content['application/json'].schema;
      expect(body.properties.codecs.type, p).to.equal('array');
      expect(body.properties.codecs.description, p).to.contain('G722');
      const put = doc.paths[`${p}/{id}`].put.requestBody.content['application/json'].schema;
      expect(put.properties.codecs.type, `${p}/{id}`).to.equal('array');
    }
  });
});
