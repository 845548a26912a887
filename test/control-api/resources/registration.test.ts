// The `registration` field of providers and trunks (outbound registration settings): written as an
// object, read back without the password and with the read-only state; bad settings are 400 naming
// the field; a trunk's registrar (customer input) must pass the egress policy.
import { expect } from 'chai';
import { as, type Harness, type Actors, useHarness } from './support';
import type { Fixture } from '../../../testkit/api';
import { outboundRegistrationsRepo } from '../../../core/repos/outbound-registrations';

describe('provider and trunk registration settings', function () {
  let h: Harness;
  let a: Actors;
  let su: Fixture;

  useHarness((x, y, z) => ((h = x), (a = y), (su = z)), { superAdmin: true });

  const good = { registrar: 'sip.carrier.example:5080', username: 'acct-1', password: 'reg-secret', expires: 600, transport: 'tcp' };

  it('a provider: set, read back without the password and with state, changed, removed', async () => {
    const api = as(h, su.token);
    const p = await api.post('/v1.0/providers').send({ hostname: 'gw.carrier.example', registration: good });
    expect(p.status, JSON.stringify(p.body)).to.equal(200);
    expect(p.body.registration).to.deep.equal({
      registrar: 'sip.carrier.example:5080',
      domain: '',
      username: 'acct-1',
      expires: 600,
      transport: 'tcp',
      state: 'unregistered',
      expires_at: '9999-01-01 00:00:00.000000',
      last_error: '',
    });
    expect(JSON.stringify(p.body)).to.not.contain('reg-secret');
    const stored = await outboundRegistrationsRepo(h.t.ctx.db).get('provider', p.body.id);
    expect(stored?.password).to.equal('reg-secret');
    expect(stored?.contact_user).to.match(/^reg-[0-9a-f]{32}$/);
    expect(JSON.stringify(p.body)).to.not.contain(stored!.contact_user);
    // a change without a password keeps the stored one (same registrar) and restarts the registration
    const upd = await api.put(`/v1.0/providers/${p.body.id}`).send({ registration: { registrar: 'sip.carrier.example:5080', username: 'acct-1', domain: 'carrier.example' } });
    expect(upd.status, JSON.stringify(upd.body)).to.equal(200);
    expect(upd.body.registration).to.include({ registrar: 'sip.carrier.example:5080', domain: 'carrier.example', expires: 3600, transport: 'udp', state: 'unregistered' });
    expect((await outboundRegistrationsRepo(h.t.ctx.db).get('provider', p.body.id))?.password).to.equal('reg-secret');
    // another registrar needs the password given again (issue 52: a stored secret goes only where it was stored for)
    const moved = await api.put(`/v1.0/providers/${p.body.id}`).send({ registration: { registrar: 'sip2.carrier.example', username: 'acct-1', domain: 'carrier.example' } });
    expect(moved.status, JSON.stringify(moved.body)).to.equal(400);
    expect(moved.body.error.details[0].field).to.equal('registration.password');
    const moved2 = await api.put(`/v1.0/providers/${p.body.id}`).send({ registration: { registrar: 'sip2.carrier.example', username: 'acct-1', domain: 'carrier.example', password: 'reg-secret' } });
    expect(moved2.status, JSON.stringify(moved2.body)).to.equal(200);
    expect((await api.get(`/v1.0/providers/${p.body.id}`)).body.registration.registrar).to.equal('sip2.carrier.example');
    expect((await api.get('/v1.0/providers')).body.result[0].registration.username).to.equal('acct-1');
    // a provider without registration reads null; null removes one
    expect((await api.post('/v1.0/providers').send({ hostname: 'gw2.carrier.example' })).body.registration).to.equal(null);
    expect((await api.put(`/v1.0/providers/${p.body.id}`).send({ registration: null })).body.registration).to.equal(null);
    expect(await outboundRegistrationsRepo(h.t.ctx.db).get('provider', p.body.id)).to.equal(null);
  });

  it('bad registration settings are 400 naming the field, and nothing is written', async () => {
    const api = as(h, su.token);
    const cases: [Record<string, unknown>, string][] = [
      [{ ...good, registrar: 'bad host' }, 'registration.registrar'],
      [{ ...good, registrar: 'sip.example:70000' }, 'registration.registrar'],
      [{ ...good, username: '' }, 'registration.username'],
      [{ ...good, username: 'a b' }, 'registration.username'],
      [{ ...good, password: 'x\r\nVia: evil' }, 'registration.password'],
      [{ ...good, expires: 10 }, 'registration.expires'],
      [{ ...good, expires: 1.5 }, 'registration.expires'],
      [{ ...good, transport: 'sctp' }, 'registration.transport'],
      [{ ...good, state: 'registered' }, 'registration'],
      [{ ...good, password: undefined }, 'registration.password'],
    ];
    for (const [registration, field] of cases) {
      const r = await api.post('/v1.0/providers').send({ hostname: 'gw.carrier.example', registration });
      expect(r.status, JSON.stringify(registration)).to.equal(400);
      expect(JSON.stringify(r.body.error), JSON.stringify(registration)).to.contain(field);
    }
    expect((await api.get('/v1.0/providers')).body.result).to.have.length(0);
  });

  it("a trunk's registrar is the customer's input: internal addresses are refused (400), a public name is kept", async () => {
    const api = as(h, a.admin);
    const base = { domain_name: 'acme-reg', auth_types: ['basic'], username: 'pbx', password: 'trunk-secret-1' };
    for (const registrar of ['127.0.0.1', '127.1:5060', 'localhost', '10.0.0.1', '[::1]:5060', '169.254.169.254', '0.0.0.0']) {
      const r = await api.post('/v1.0/trunks').send({ ...base, registration: { ...good, registrar } });
      expect(r.status, registrar).to.equal(400);
      expect(r.body.error.details?.[0]?.field, registrar).to.equal('registration.registrar');
    }
    expect((await api.get('/v1.0/trunks')).body.result).to.have.length(0);
    const t = await api.post('/v1.0/trunks').send({ ...base, registration: good });
    expect(t.status, JSON.stringify(t.body)).to.equal(200);
    expect(t.body.registration).to.include({ registrar: 'sip.carrier.example:5080', state: 'unregistered' });
    expect(JSON.stringify(t.body)).to.not.contain('reg-secret');
    const bad = await api.put(`/v1.0/trunks/${t.body.id}`).send({ registration: { ...good, registrar: '192.168.1.1' } });
    expect(bad.status).to.equal(400);
    expect((await api.get(`/v1.0/trunks/${t.body.id}`)).body.registration.registrar).to.equal('sip.carrier.example:5080');
    // a manager of the same customer cannot read it (admin only)
    expect((await as(h, a.manager).get(`/v1.0/trunks/${t.body.id}`)).status).to.equal(403);
  });
});
