import { expect } from 'chai';
import { as, type Harness, type Actors, useHarness } from './support';
import type { Fixture } from '../../../testkit/api';

describe('media_encryption on trunks, providers and extensions', function () {
  let h: Harness;
  let a: Actors;
  let su: Fixture;

  useHarness((x, y, z) => ((h = x), (a = y), (su = z)), { superAdmin: true });

  const bad = ['srtp', 'SDES', '', 'none ', 1, null, ['sdes']];

  it('trunks: none by default, set on create and update, anything outside none|sdes|dtls refused with 400', async () => {
    const api = as(h, a.admin);
    const t = await api.post('/v1.0/trunks').send({ domain_name: 'enc-pbx', auth_types: ['ip'], allowed_ips: ['192.0.2.1'] });
    expect(t.status, JSON.stringify(t.body)).to.equal(200);
    expect(t.body.media_encryption).to.equal('none');
    const s = await api.post('/v1.0/trunks').send({ domain_name: 'enc-pbx2', auth_types: ['ip'], allowed_ips: ['192.0.2.2'], media_encryption: 'sdes' });
    expect(s.body.media_encryption).to.equal('sdes');
    const u = await api.put(`/v1.0/trunks/${t.body.id}`).send({ media_encryption: 'dtls' });
    expect(u.status).to.equal(200);
    expect((await api.get(`/v1.0/trunks/${t.body.id}`)).body.media_encryption).to.equal('dtls');
    for (const v of bad) {
      const r = await api.put(`/v1.0/trunks/${t.body.id}`).send({ media_encryption: v });
      expect(r.status, JSON.stringify(v)).to.equal(400);
      expect(JSON.stringify(r.body.error), JSON.stringify(v)).to.contain('media_encryption');
      expect((await api.post('/v1.0/trunks').send({ domain_name: 'enc-bad', auth_types: ['ip'], allowed_ips: ['192.0.2.3'], media_encryption: v })).status).to.equal(400);
    }
    expect((await api.get(`/v1.0/trunks/${t.body.id}`)).body.media_encryption, 'unchanged by the refused updates').to.equal('dtls');
  });

  it('providers: none by default, sdes on create, dtls on update, bad values refused', async () => {
    const api = as(h, su.token);
    const p = await api.post('/v1.0/providers').send({ hostname: 'gw.carrier.example', media_encryption: 'sdes' });
    expect(p.status, JSON.stringify(p.body)).to.equal(200);
    expect(p.body.media_encryption).to.equal('sdes');
    expect((await api.post('/v1.0/providers').send({ hostname: 'gw2.carrier.example' })).body.media_encryption).to.equal('none');
    expect((await api.put(`/v1.0/providers/${p.body.id}`).send({ media_encryption: 'dtls' })).body.media_encryption).to.equal('dtls');
    for (const v of bad) expect((await api.put(`/v1.0/providers/${p.body.id}`).send({ media_encryption: v })).status, JSON.stringify(v)).to.equal(400);
  });

  it('extensions: none by default, set and changed, bad values refused', async () => {
    const api = as(h, a.manager);
    const e = await api.post('/v1.0/extensions').send({ extension: '2101', media_encryption: 'dtls' });
    expect(e.status, JSON.stringify(e.body)).to.equal(200);
    expect(e.body.media_encryption).to.equal('dtls');
    expect((await api.post('/v1.0/extensions').send({ extension: '2102' })).body.media_encryption).to.equal('none');
    expect((await api.put(`/v1.0/extensions/${e.body.id}`).send({ media_encryption: 'sdes' })).body.media_encryption).to.equal('sdes');
    for (const v of bad) expect((await api.post('/v1.0/extensions').send({ extension: '2103', media_encryption: v })).status, JSON.stringify(v)).to.equal(400);
  });
});
