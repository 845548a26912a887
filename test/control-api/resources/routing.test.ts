import { expect } from 'chai';
import { as, EMPTY, type Harness, type Actors, useHarness, actors } from './support';
import type { Fixture } from '../../../testkit/api';
import { resolveRoutes, orderRoutes, providerRequestUri } from '../../../core/routing/resolve';
import { trunksRepo } from '../../../core/repos/trunks';
import type { RouteRow } from '../../../core/repos/routes';
import { isIpOrCidr } from '../../../control-api/routes/trunks';

describe('providers, trunks and routes', function () {
  let h: Harness;
  let a: Actors;
  let su: Fixture;

  useHarness((x, y, z) => ((h = x), (a = y), (su = z)), { superAdmin: true });

  const provider = async (name: string, extra: Record<string, unknown> = {}) => {
    const r = await as(h, su.token)
      .post('/v1.0/providers')
      .send({ hostname: `${name}.carrier.example`, name, ...extra });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as { id: string };
  };
  const route = async (customerId: string, providerId: string, target: string, priority: number) => {
    const r = await as(h, su.token).post('/v1.0/routes').send({ customer_id: customerId, provider_id: providerId, target, priority });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as { id: string };
  };

  describe('providers (ProjectSuperAdmin)', () => {
    it('CRUD with write-only credentials', async () => {
      const api = as(h, su.token);
      const p = await api.post('/v1.0/providers').send({
        type: 'sip',
        hostname: 'gw.carrier.example:5080',
        tech_prefix: '9',
        tech_postfix: '#',
        tech_headers: { 'X-Account': 'acme' },
        auth_username: 'acme',
        auth_password: 'very-secret',
        codecs: 'pcmu,PCMA',
        name: 'carrier',
        detail: 'd',
      });
      expect(p.status, JSON.stringify(p.body)).to.equal(200);
      expect(p.body).to.include({ type: 'sip', hostname: 'gw.carrier.example:5080', tech_prefix: '9', tech_postfix: '#', auth_username: 'acme', transport: 'udp', health_status: 'unknown' });
      expect(p.body.tech_headers).to.deep.equal({ 'X-Account': 'acme' });
      expect(JSON.stringify(p.body)).to.not.contain('very-secret');
      const upd = await api.put(`/v1.0/providers/${p.body.id}`).send({ tech_prefix: '', transport: 'tcp' });
      expect(upd.body).to.include({ tech_prefix: '', transport: 'tcp', hostname: 'gw.carrier.example:5080' });
      expect((await api.get('/v1.0/providers')).body.result).to.have.length(1);
      expect((await api.get(`/v1.0/providers/${p.body.id}`)).status).to.equal(200);
      expect((await api.delete(`/v1.0/providers/${p.body.id}`)).status).to.equal(200);
      const gone = await api.get(`/v1.0/providers/${p.body.id}`);
      expect(gone.status).to.equal(404);
      expect(gone.body.error.reason).to.equal('PROVIDER_NOT_FOUND');
    });

    it('validates hostnames, dial parts and headers', async () => {
      const api = as(h, su.token);
      for (const body of [
        {},
        { hostname: 'bad host' },
        { hostname: 'ok.example', tech_prefix: 'a b' },
        { hostname: 'ok.example', tech_headers: { Via: 'x' } },
        { hostname: 'ok.example', tech_headers: { 'X-A': 'a\r\nInjected: 1' } },
        { hostname: 'ok.example', type: 'iax' },
        { hostname: 'ok.example', transport: 'sctp' },
      ]) {
        expect((await api.post('/v1.0/providers').send(body)).status, JSON.stringify(body)).to.equal(400);
      }
    });

    it('customer admins, managers and agents get 403 PERMISSION_DENIED', async () => {
      const p = await provider('one');
      for (const token of [a.admin, a.manager, a.agent]) {
        const api = as(h, token);
        for (const r of [
          await api.get('/v1.0/providers'),
          await api.post('/v1.0/providers').send({ hostname: 'x.example' }),
          await api.get(`/v1.0/providers/${p.id}`),
          await api.put(`/v1.0/providers/${p.id}`).send({ name: 'x' }),
          await api.delete(`/v1.0/providers/${p.id}`),
          await api.get('/v1.0/routes'),
          await api.post('/v1.0/routes').send({ customer_id: a.customerId, provider_id: p.id, target: 'all' }),
        ]) {
          expect(r.status).to.equal(403);
          expect(r.body.error.reason).to.equal('PERMISSION_DENIED');
        }
      }
    });
  });

  describe('trunks (customer admin)', () => {
    it('CRUD by source address and digest; password write-only; domain unique', async () => {
      const api = as(h, a.admin);
      const t = await api.post('/v1.0/trunks').send({
        name: 'pbx',
        domain_name: 'acme-pbx',
        auth_types: ['ip', 'basic'],
        username: 'pbx',
        password: 'trunk-secret-1',
        allowed_ips: ['203.0.113.10', '198.51.100.0/24', '2001:db8::/32'],
      });
      expect(t.status, JSON.stringify(t.body)).to.equal(200);
      expect(t.body).to.include({ domain_name: 'acme-pbx', realm: 'acme-pbx.trunk.sip.example.test', username: 'pbx', customer_id: a.customerId });
      expect(t.body.allowed_ips).to.deep.equal(['203.0.113.10', '198.51.100.0/24', '2001:db8::/32']);
      expect(JSON.stringify(t.body)).to.not.contain('trunk-secret');
      expect((await api.post('/v1.0/trunks').send({ domain_name: 'acme-pbx', auth_types: ['ip'], allowed_ips: ['192.0.2.1'] })).status).to.equal(409);

      const repo = trunksRepo(h.t.ctx.db);
      const byIp = async (ip: string) => (await repo.findBySourceIpWithStanding(ip)).map((x) => x.trunk);
      expect((await byIp('198.51.100.77')).map((x) => x.id)).to.deep.equal([t.body.id]);
      expect((await byIp('2001:db8::5')).map((x) => x.id)).to.deep.equal([t.body.id]);
      expect(await byIp('192.0.2.1')).to.deep.equal([]);
      expect((await repo.getByDomain('acme-pbx'))?.password).to.equal('trunk-secret-1');

      const upd = await api.put(`/v1.0/trunks/${t.body.id}`).send({ allowed_ips: ['192.0.2.0/28'], auth_types: ['ip'] });
      expect(upd.status).to.equal(200);
      expect(upd.body.auth_types).to.deep.equal(['ip']);
      expect((await byIp('192.0.2.1')).map((x) => x.id)).to.deep.equal([t.body.id]);
      expect(await byIp('198.51.100.77')).to.deep.equal([]);
      expect((await api.get('/v1.0/trunks')).body.result).to.have.length(1);
      expect((await api.delete(`/v1.0/trunks/${t.body.id}`)).status).to.equal(200);
      expect((await api.get(`/v1.0/trunks/${t.body.id}`)).body.error.reason).to.equal('TRUNK_NOT_FOUND');
      expect(await byIp('192.0.2.1')).to.deep.equal([]);
    });

    it('validation: addresses, auth settings, domain label', async () => {
      expect(isIpOrCidr('10.0.0.0/8')).to.equal(true);
      expect(isIpOrCidr('::1')).to.equal(true);
      for (const bad of ['10.0.0.0/33', '300.1.1.1', '10.0.0.1/8/1', 'host.example', '::1/129', '10.0.0.0/']) expect(isIpOrCidr(bad), bad).to.equal(false);
      const api = as(h, a.admin);
      for (const body of [
        { domain_name: 'pbx', auth_types: ['ip'], allowed_ips: ['10.0.0.0/33'] },
        { domain_name: 'pbx', auth_types: ['ip'], allowed_ips: [] },
        { domain_name: 'pbx', auth_types: ['basic'], username: 'u' },
        { domain_name: 'pbx', auth_types: ['basic'], username: 'u', password: 'short' },
        { domain_name: 'PBX!', auth_types: ['ip'], allowed_ips: ['10.0.0.1'] },
        { domain_name: 'pbx', auth_types: [], allowed_ips: ['10.0.0.1'] },
        { domain_name: 'pbx', auth_types: ['token'], allowed_ips: ['10.0.0.1'] },
      ])
        expect((await api.post('/v1.0/trunks').send(body)).status, JSON.stringify(body)).to.equal(400);
    });

    it('managers and agents get 403; other customers 404', async () => {
      const t = await as(h, a.admin)
        .post('/v1.0/trunks')
        .send({ domain_name: 'pbx1', auth_types: ['ip'], allowed_ips: ['10.0.0.1'] });
      for (const token of [a.manager, a.agent]) {
        const r = await as(h, token).get('/v1.0/trunks');
        expect(r.status).to.equal(403);
        expect(r.body.error.reason).to.equal('PERMISSION_DENIED');
        expect(
          (
            await as(h, token)
              .post('/v1.0/trunks')
              .send({ domain_name: 'pbx2', auth_types: ['ip'], allowed_ips: ['10.0.0.1'] })
          ).status,
        ).to.equal(403);
      }
      const other = as(h, (await actors(h)).admin);
      expect((await other.get(`/v1.0/trunks/${t.body.id}`)).status).to.equal(404);
      expect((await other.put(`/v1.0/trunks/${t.body.id}`).send({ name: 'x' })).status).to.equal(404);
      expect((await other.delete(`/v1.0/trunks/${t.body.id}`)).status).to.equal(404);
    });
  });

  describe('routes and resolution', () => {
    it('CRUD and validation', async () => {
      const p = await provider('p');
      const api = as(h, su.token);
      const r = await route(a.customerId, p.id, '1', 10);
      expect((await api.get('/v1.0/routes').query({ customer_id: a.customerId })).body.result.map((x: { id: string }) => x.id)).to.deep.equal([r.id]);
      expect((await api.get('/v1.0/routes').query({ customer_id: EMPTY })).body.result).to.deep.equal([]);
      const upd = await api.put(`/v1.0/routes/${r.id}`).send({ priority: 3, target: 'all' });
      expect(upd.body).to.include({ priority: 3, target: 'all' });
      for (const body of [
        { customer_id: a.customerId, provider_id: p.id, target: '+1' },
        { customer_id: a.customerId, provider_id: p.id, target: 'everything' },
        { customer_id: a.customerId, provider_id: p.id, target: '1', priority: -1 },
        { customer_id: 'nope', provider_id: p.id, target: '1' },
      ])
        expect((await api.post('/v1.0/routes').send(body)).status, JSON.stringify(body)).to.equal(400);
      const ghost = await api.post('/v1.0/routes').send({ customer_id: a.customerId, provider_id: EMPTY, target: '1' });
      expect(ghost.status).to.equal(404);
      expect(ghost.body.error.reason).to.equal('PROVIDER_NOT_FOUND');
      expect((await api.delete(`/v1.0/routes/${r.id}`)).status).to.equal(200);
      expect((await api.get(`/v1.0/routes/${r.id}`)).status).to.equal(404);
    });

    it('resolveRoutes: own routes first (specific prefix, then priority), defaults as fallback, each provider once', async () => {
      const [pa, pb, pc, pd, pe] = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((n) => provider(n)));
      await route(a.customerId, pa.id, 'all', 1);
      await route(a.customerId, pb.id, '44', 5);
      await route(a.customerId, pc.id, '44', 2);
      await route(a.customerId, pd.id, '1', 1); // does not match +44
      await route(EMPTY, pe.id, '4420', 1);
      await route(EMPTY, pa.id, 'all', 0); // a is already in the list
      const ids = async (cust: string, dest: string) => (await resolveRoutes(h.t.ctx.db, cust, dest)).map((x) => x.provider.name);
      expect(await ids(a.customerId, '+442079460000')).to.deep.equal(['c', 'b', 'a', 'e']);
      expect(await ids(a.customerId, '+14155550100')).to.deep.equal(['d', 'a']);
      // Another customer only sees the defaults.
      const other = await actors(h);
      expect(await ids(other.customerId, '+442079460000')).to.deep.equal(['e', 'a']);
      expect(await ids(other.customerId, '+33123456789')).to.deep.equal(['a']);
      // A deleted provider drops out; the next one is the fallback.
      await as(h, su.token).delete(`/v1.0/providers/${pc.id}`);
      expect(await ids(a.customerId, '+442079460000')).to.deep.equal(['b', 'a', 'e']);
      expect(await ids(a.customerId, 'sip:bob@example.com')).to.deep.equal([]);
    });

    it('orderRoutes is deterministic on ties and providerRequestUri wraps the number', () => {
      const mk = (id: string, customer: string, target: string, priority: number, t: number): RouteRow => ({
        id,
        customer_id: customer,
        name: '',
        detail: '',
        provider_id: id,
        priority,
        target,
        tm_create: new Date(t),
        tm_update: null,
        tm_delete: null,
      });
      const c = '11111111-1111-4111-8111-111111111111';
      const out = orderRoutes([mk('x', c, '1', 1, 2), mk('y', c, '1', 1, 1), mk('z', EMPTY, '1415', 0, 0), mk('w', c, '14', 9, 3)], c, '+14155550100');
      expect(out.map((r) => r.id)).to.deep.equal(['w', 'y', 'x', 'z']);
      expect(providerRequestUri({ hostname: 'gw.example:5080', tech_prefix: '9', tech_postfix: '#', transport: 'udp' }, '+14155550100')).to.equal('sip:9+14155550100#@gw.example:5080');
      expect(providerRequestUri({ hostname: 'gw.example', tech_prefix: '', tech_postfix: '', transport: 'tls' }, '+1')).to.equal('sip:+1@gw.example;transport=tls');
    });
  });
});
