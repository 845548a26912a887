// An extension's digest_algorithms: the challenge order its phone gets (null = platform default).
import { expect } from 'chai';
import request from 'supertest';
import { as, type Harness, type Actors, useHarness } from './support';
import { extensionsRepo } from '../../../core/repos/extensions';

describe('extensions: digest_algorithms', function () {
  let h: Harness;
  let a: Actors;

  useHarness((x, y) => ((h = x), (a = y)));

  it('null (platform default) unless set; set on create and update; null resets; the registrar sees it', async () => {
    const api = as(h, a.admin);
    const plain = await api.post('/v1.0/extensions').send({ extension: '5001', password: 'secret-pass-1' });
    expect(plain.status, JSON.stringify(plain.body)).to.equal(200);
    expect(plain.body.digest_algorithms).to.equal(null);
    const strict = await api.post('/v1.0/extensions').send({ extension: '5002', password: 'secret-pass-1', digest_algorithms: ['SHA-256'] });
    expect(strict.status, JSON.stringify(strict.body)).to.equal(200);
    expect(strict.body.digest_algorithms).to.deep.equal(['SHA-256']);
    const put = await api.put(`/v1.0/extensions/${plain.body.id}`).send({ digest_algorithms: ['SHA-256', 'MD5'] });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.digest_algorithms).to.deep.equal(['SHA-256', 'MD5']);
    expect((await api.get(`/v1.0/extensions/${plain.body.id}`)).body.digest_algorithms).to.deep.equal(['SHA-256', 'MD5']);
    expect((await extensionsRepo(h.t.ctx.db).getByAor('5001', plain.body.domain_name))?.digest_algorithms).to.deep.equal(['SHA-256', 'MD5']);
    // other fields leave it alone; null goes back to the default
    expect((await api.put(`/v1.0/extensions/${plain.body.id}`).send({ name: 'x' })).body.digest_algorithms).to.deep.equal(['SHA-256', 'MD5']);
    expect((await api.put(`/v1.0/extensions/${plain.body.id}`).send({ digest_algorithms: null })).body.digest_algorithms).to.equal(null);
  });

  it('refuses unknown, repeated or no algorithms with 400 naming the field', async () => {
    const api = as(h, a.admin);
    const ok = await api.post('/v1.0/extensions').send({ extension: '6001', password: 'secret-pass-1' });
    for (const bad of [[], ['SHA-1'], ['md5'], ['MD5', 'MD5'], ['MD5', 'SHA-256', 'MD5'], 'MD5', [1]]) {
      for (const r of [
        await api.post('/v1.0/extensions').send({ extension: '6002', password: 'secret-pass-1', digest_algorithms: bad }),
        await api.put(`/v1.0/extensions/${ok.body.id}`).send({ digest_algorithms: bad }),
      ]) {
        expect(r.status, JSON.stringify(bad)).to.equal(400);
        expect(r.body.error.reason, JSON.stringify(r.body)).to.equal('INVALID_ARGUMENT');
        expect(JSON.stringify(r.body)).to.contain('digest_algorithms');
      }
    }
    expect((await api.get(`/v1.0/extensions/${ok.body.id}`)).body.digest_algorithms).to.equal(null);
  });

  it('is in the OpenAPI document of the extension routes', async () => {
    const doc = (await request(h.app).get('/v1.0/openapi.json')).body;
    const text = JSON.stringify(doc.paths['/extensions'].post) + JSON.stringify(doc.paths['/extensions/{id}'].put) + JSON.stringify(doc.components ?? {});
    expect(text).to.contain('digest_algorithms').and.contain('SHA-256');
  });
});
