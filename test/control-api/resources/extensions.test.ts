import { expect } from 'chai';
import request from 'supertest';
import { startHarness, actors, reset, as, type Harness, type Actors } from './support';
import { clock } from '../../../core/clock';
import { parseXmlStrict, find } from './xml-check';
import { extensionsRepo } from '../../../core/repos/extensions';
import { bufferBody } from '../../../testkit/buffer-body';

describe('extensions', function () {
  let h: Harness;
  let a: Actors;

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    clock.reset();
    await h.close();
  });
  beforeEach(async () => {
    await reset();
    a = await actors(h);
  });

  const create = (token: string, body: Record<string, unknown>) => as(h, token).post('/v1.0/extensions').send(body);

  it('creates with a generated registration domain, username and direct hash; the password only once', async () => {
    const r = await create(a.manager, { extension: '1001', password: 'secret-pass-1', name: 'Desk' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.include({ extension: '1001', username: '1001', password: 'secret-pass-1', name: 'Desk', customer_id: a.customerId });
    expect(r.body.domain_name).to.match(/^[a-z0-9]{4}\.reg\.sip\.example\.test$/);
    expect(r.body.direct_hash).to.match(/^[0-9a-f]{12}$/);
    expect(r.body.direct_uri).to.equal(`sip:direct.${r.body.direct_hash}@sip.example.test`);
    expect(r.body.tm_update).to.equal('');
    expect(r.body.tm_delete).to.equal('');

    // Same customer: same domain. Another customer: another domain.
    const r2 = await create(a.admin, { extension: '1002', password: 'secret-pass-2' });
    expect(r2.body.domain_name).to.equal(r.body.domain_name);
    const other = await actors(h);
    const r3 = await create(other.admin, { extension: '1001', password: 'secret-pass-3' });
    expect(r3.status).to.equal(200);
    expect(r3.body.domain_name).to.not.equal(r.body.domain_name);

    // Never again: get, list, update, regenerate, delete.
    const api = as(h, a.admin);
    const seen = [
      (await api.get(`/v1.0/extensions/${r.body.id}`)).body,
      ...(await api.get('/v1.0/extensions')).body.result,
      (await api.put(`/v1.0/extensions/${r.body.id}`).send({ password: 'changed-pass-1', detail: 'x' })).body,
      (await api.post(`/v1.0/extensions/${r.body.id}/direct-hash-regenerate`)).body,
      (await api.delete(`/v1.0/extensions/${r2.body.id}`)).body,
    ];
    for (const body of seen) {
      expect(body.id).to.be.a('string');
      expect(body).to.not.have.property('password');
      expect(JSON.stringify(body)).to.not.contain('secret-pass').and.not.contain('changed-pass');
    }
    // The change took effect where it matters (the registrar's lookup).
    const row = await extensionsRepo(h.t.ctx.db).getByAor('1001', r.body.domain_name);
    expect(row?.password).to.equal('changed-pass-1');
    // A generated password when omitted, shown once.
    const gen = await create(a.admin, { extension: 'reception' });
    expect(gen.body.password).to.match(/^[A-Za-z0-9]{20}$/);
  });

  it('regenerating the direct hash replaces the direct URI', async () => {
    const r = await create(a.admin, { extension: '2001', password: 'secret-pass-1' });
    const g = await as(h, a.admin).post(`/v1.0/extensions/${r.body.id}/direct-hash-regenerate`);
    expect(g.status).to.equal(200);
    expect(g.body.direct_hash)
      .to.match(/^[0-9a-f]{12}$/)
      .and.not.equal(r.body.direct_hash);
    expect(g.body.direct_uri).to.equal(`sip:direct.${g.body.direct_hash}@sip.example.test`);
    const repo = extensionsRepo(h.t.ctx.db);
    expect(await repo.getByDirectHash(r.body.direct_hash)).to.equal(null);
    expect((await repo.getByDirectHash(g.body.direct_hash))?.id).to.equal(r.body.id);
  });

  it('validates input and keeps the extension value unique per customer', async () => {
    for (const body of [
      {},
      { extension: '' },
      { extension: 'has space', password: 'secret-pass-1' },
      { extension: 'direct.abc', password: 'secret-pass-1' },
      { extension: '1001', password: 'short' },
      { extension: '1001', password: 'with space in it' },
      { extension: 'x'.repeat(65) },
    ]) {
      const r = await create(a.admin, body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
    }
    expect((await create(a.admin, { extension: '1001', password: 'secret-pass-1' })).status).to.equal(200);
    const dup = await create(a.admin, { extension: '1001', password: 'secret-pass-2' });
    expect(dup.status).to.equal(409);
    expect(dup.body.error.reason).to.equal('ALREADY_EXISTS');
    const ext = (await as(h, a.admin).get('/v1.0/extensions')).body.result[0];
    expect((await as(h, a.admin).put(`/v1.0/extensions/${ext.id}`).send({ password: 'bad pw' })).status).to.equal(400);
    // Deleting frees the value.
    await as(h, a.admin).delete(`/v1.0/extensions/${ext.id}`);
    expect((await create(a.admin, { extension: '1001', password: 'secret-pass-3' })).status).to.equal(200);
  });

  it('agents cannot create, change or delete; other customers get 404', async () => {
    const r = await create(a.admin, { extension: '3001', password: 'secret-pass-1' });
    const agent = as(h, a.agent);
    expect((await agent.post('/v1.0/extensions').send({ extension: '3002', password: 'secret-pass-1' })).status).to.equal(403);
    expect((await agent.put(`/v1.0/extensions/${r.body.id}`).send({ name: 'n' })).status).to.equal(403);
    expect((await agent.delete(`/v1.0/extensions/${r.body.id}`)).status).to.equal(403);
    expect((await agent.get(`/v1.0/extensions/${r.body.id}`)).status).to.equal(200);
    const other = as(h, (await actors(h)).admin);
    for (const res of [
      await other.get(`/v1.0/extensions/${r.body.id}`),
      await other.put(`/v1.0/extensions/${r.body.id}`).send({ name: 'n' }),
      await other.delete(`/v1.0/extensions/${r.body.id}`),
      await other.post(`/v1.0/extensions/${r.body.id}/direct-hash-regenerate`),
      await other.post(`/v1.0/extensions/${r.body.id}/provisioning-token`),
    ])
      expect(res.status).to.equal(404);
  });

  describe('provisioning', () => {
    async function issue(token = a.manager, password = 'p<a&ss"w0rd') {
      const ext = await create(a.admin, { extension: '4001', password, name: 'Lobby' });
      const t = await as(h, token).post(`/v1.0/extensions/${ext.body.id}/provisioning-token`);
      return { ext: ext.body, t };
    }

    it('admin or manager get {token, url, expire}; agents get 403', async () => {
      const { ext, t } = await issue();
      expect(t.status, JSON.stringify(t.body)).to.equal(200);
      expect(t.body.token).to.match(/^[0-9a-f]{64}$/);
      expect(t.body.url).to.equal(`https://pbx.example.test/provisioning/extension?token=${t.body.token}`);
      const exp = Date.parse(t.body.expire);
      expect(t.body.expire).to.match(/Z$/);
      expect(exp - Date.now()).to.be.within(9.5 * 60_000, 10.5 * 60_000);
      expect((await as(h, a.admin).post(`/v1.0/extensions/${ext.id}/provisioning-token`)).status).to.equal(200);
      const denied = await as(h, a.agent).post(`/v1.0/extensions/${ext.id}/provisioning-token`);
      expect(denied.status).to.equal(403);
      expect(denied.body.error.reason).to.equal('PERMISSION_DENIED');
    });

    it('the URL serves the config, reusable inside 10 minutes, then 400; never cached', async () => {
      clock.setNow(Date.now());
      const { ext, t } = await issue();
      const path = `/provisioning/extension?token=${t.body.token}&format=linphone`;
      for (let i = 0; i < 2; i++) {
        const r = await request(h.app).get(path);
        expect(r.status).to.equal(200);
        expect(r.headers['content-type']).to.match(/^application\/xml/);
        expect(r.headers['cache-control']).to.contain('no-store');
        const root = parseXmlStrict(r.text);
        expect(find(root, (e) => e.attrs.name === 'passwd')?.text).to.equal('p<a&ss"w0rd');
        expect(find(root, (e) => e.attrs.name === 'reg_identity')?.text).to.equal(`sip:4001@${ext.domain_name}`);
      }
      clock.advance(9 * 60_000 + 59_000);
      expect((await request(h.app).get(path)).status).to.equal(200);
      clock.advance(2_000);
      const gone = await request(h.app).get(path);
      expect(gone.status).to.equal(400);
      expect(gone.text).to.equal('');
      expect(gone.headers['cache-control']).to.contain('no-store');
      // A new token works again; the extension being deleted kills every token.
      const t2 = await as(h, a.admin).post(`/v1.0/extensions/${ext.id}/provisioning-token`);
      expect((await request(h.app).get(`/provisioning/extension?token=${t2.body.token}&format=linphone`)).status).to.equal(200);
      await as(h, a.admin).delete(`/v1.0/extensions/${ext.id}`);
      expect((await request(h.app).get(`/provisioning/extension?token=${t2.body.token}&format=linphone`)).status).to.equal(400);
    });

    it('unknown, malformed or missing tokens and unknown formats are a bare 400', async () => {
      const { t } = await issue();
      for (const q of [
        '',
        '?token=',
        `?token=${'0'.repeat(64)}`,
        `?token=${t.body.token.toUpperCase()}`,
        `?token=${t.body.token}x`,
        `?token=${t.body.token}&format=avaya`,
        `?token[]=${t.body.token}`,
      ]) {
        const r = await request(h.app).get(`/provisioning/extension${q}`);
        expect(r.status, q).to.equal(400);
        expect(r.text).to.equal('');
      }
    });

    it('each phone family by format parameter or User-Agent', async () => {
      const { t } = await issue();
      const get = (q: string, ua?: string) => {
        const r = request(h.app).get(`/provisioning/extension?token=${t.body.token}${q}`);
        return ua ? r.set('User-Agent', ua) : r;
      };
      const yealink = await get('', 'Yealink SIP-T54W 96.86.0.100');
      expect(yealink.status).to.equal(200);
      expect(yealink.text.split('\n')[0]).to.equal('#!version:1.0.0.1');
      expect(yealink.text).to.contain('account.1.user_name = 4001');
      expect(parseXmlStrict((await get('&format=grandstream')).text).name).to.equal('gs_provision');
      expect(parseXmlStrict((await get('', 'Grandstream GRP2614 1.0.5.67')).text).name).to.equal('gs_provision');
      expect(parseXmlStrict((await get('&format=polycom')).text).name).to.equal('polycomConfig');
      expect(parseXmlStrict((await get('', 'snom D717/10.1.73.16')).text).name).to.equal('settings');
      // format beats User-Agent.
      expect(parseXmlStrict((await get('&format=linphone', 'Yealink SIP-T54W')).text).name).to.equal('config');
    });

    it('QR code of the URL as PNG and SVG for a valid token only', async () => {
      const { t } = await issue();
      const raw = (path: string) => request(h.app).get(path).buffer(true).parse(bufferBody);
      const png = await raw(`/provisioning/extension/qr.png?token=${t.body.token}`);
      expect(png.status).to.equal(200);
      expect(png.headers['content-type']).to.equal('image/png');
      expect((png.body as Buffer).subarray(0, 8).toString('hex')).to.equal('89504e470d0a1a0a');
      const svg = await raw(`/provisioning/extension/qr.svg?token=${t.body.token}`);
      expect(svg.status).to.equal(200);
      expect(svg.headers['content-type']).to.match(/^image\/svg\+xml/);
      const root = parseXmlStrict((svg.body as Buffer).toString('utf8').trim());
      expect(root.children.some((c) => c.name === 'path')).to.equal(true);
      expect((await request(h.app).get(`/provisioning/extension/qr.svg?token=${'f'.repeat(64)}`)).status).to.equal(400);
    });
  });
});

describe('provisioning URL rate limit', function () {
  let h: Harness;
  before(async () => {
    // scale 0.1: burst 2, 1 request/s per IP (the /auth tier's 10/s burst 20, scaled).
    h = await startHarness({ RATE_LIMIT_SCALE: '0.1' });
  });
  after(async () => h.close());

  it('guessing is bounded per IP: 429 with Retry-After once the bucket is empty', async () => {
    const statuses: number[] = [];
    let retryAfter: string | undefined;
    for (let i = 0; i < 4; i++) {
      const r = await request(h.app).get(`/provisioning/extension?token=${'1'.repeat(64)}`);
      statuses.push(r.status);
      if (r.status === 429) retryAfter = r.headers['retry-after'];
    }
    expect(statuses.slice(0, 2)).to.deep.equal([400, 400]);
    expect(statuses).to.include(429);
    expect(Number(retryAfter)).to.be.at.least(1);
  });
});
