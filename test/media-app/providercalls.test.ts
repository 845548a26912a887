// /providercalls end to end: the operator (ProjectSuperAdmin) calls a tel destination through one
// provider, a sipp UAS on loopback, while its routes point elsewhere (a provider nobody answers for);
// the INVITE reaches the forced provider only. Then the record's list (provider filter), get, delete,
// and the errors: other callers, an unknown provider, non-tel destinations, bad input.
import { sipProvider } from '../../testkit/providers';
import { expect } from 'chai';
import request from 'supertest';
import { routesRepo } from '../../core/repos/routes';
import { numbersRepo } from '../../core/repos/numbers';
import { repos } from '../../core/repos';
import { addBalance, ensureBillingAccount } from '../../core/billing';
import { Permission } from '../../core/permissions';
import { newId } from '../../core/ids';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { closeCommandBus } from '../../control-api/calls/bus';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { answeringUas, killAllSipp, sipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';

describe('/providercalls: an operator call forced through one provider', function () {
  this.timeout(90_000);
  let p: Platform;
  let t: TestApp;
  let su: Fixture;
  let admin: Fixture;

  before(async () => {
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } });
    su = await createFixture(t.ctx, { permission: Permission.ProjectSuperAdmin });
    admin = await createFixture(t.ctx);
  });
  after(async () => {
    killAllSipp();
    if (t) await closeCommandBus(t.ctx);
    await t?.close();
    await p?.close();
  });

  const as = (f: Fixture) => ({
    post: (path: string, body: object) => request(t.app).post(`/v1.0${path}`).set('Authorization', `Bearer ${f.token}`).send(body),
    get: (path: string) => request(t.app).get(`/v1.0${path}`).set('Authorization', `Bearer ${f.token}`),
    del: (path: string) => request(t.app).delete(`/v1.0${path}`).set('Authorization', `Bearer ${f.token}`),
  });
  const provider = (port: number, name: string) => sipProvider(t.ctx.db, `127.0.0.1:${port}`, name);

  it('dials through the given provider, not the routes; the record lists, filters, reads and deletes', async () => {
    const db = t.ctx.db;
    const cid = su.customer.id;
    const [routedPort, forcedPort] = [await freePort(), await freePort()];
    const routed = await provider(routedPort, 'routed');
    const forced = await provider(forcedPort, 'forced');
    await routesRepo(db).create({ customer_id: cid, name: 'r', detail: '', provider_id: routed.id, priority: 1, target: 'all' });
    await db('outbound_configs').where({ customer_id: cid }).del(); // the fixture's: no whitelist
    await repos(db).outboundConfigs.create({ customer_id: cid, destination_whitelist: ['us'] });
    await addBalance(db, (await ensureBillingAccount(db, cid)).id, 1_000_000, `providercall:${cid}`);
    await numbersRepo(db).create({ customer_id: cid, number: '+15550009999', type: 'normal' } as never);
    const answering = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(forcedPort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
    await new Promise((r) => setTimeout(r, 300));

    const r = await as(su).post('/providercalls', {
      provider_id: forced.id,
      source: { type: 'tel', target: '+15550009999' },
      destinations: [{ type: 'tel', target: '+15557650000' }],
      actions: [{ type: 'talk', option: { text: 'Provider test.', language: 'en-US' } }, { type: 'hangup' }],
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.include({ customer_id: cid, provider_id: forced.id, anonymous: 'auto' });
    expect(r.body.call_ids).to.have.length(1);
    expect(r.body.groupcall_ids).to.deep.equal([]);
    const a = await answering.done;
    expect(a.code, a.errors + a.messages.slice(-2000)).to.equal(0);
    expect(a.messages).to.include(`INVITE sip:+15557650000@127.0.0.1:${forcedPort} SIP/2.0`);
    const call = await until(
      async () => {
        const c = await db('calls').where({ id: r.body.call_ids[0] }).first();
        return c?.status === 'hangup' ? c : null;
      },
      15_000,
      'the call ends',
    );
    expect(call.hangup_reason).to.equal('normal');

    // a second one through the routed provider's id, to see the filter
    const other = await as(su).post('/providercalls', {
      provider_id: routed.id,
      source: { type: 'tel', target: '+15550009999' },
      destinations: [{ type: 'tel', target: '+15557650001' }],
      actions: [{ type: 'hangup' }],
    });
    expect(other.status, JSON.stringify(other.body)).to.equal(200);
    const all = await as(su).get('/providercalls');
    expect(all.body.result.map((x: { id: string }) => x.id)).to.deep.equal([other.body.id, r.body.id]);
    const filtered = await as(su).get(`/providercalls?provider_id=${forced.id}`);
    expect(filtered.body.result.map((x: { id: string }) => x.id)).to.deep.equal([r.body.id]);
    expect((await as(su).get(`/providercalls/${r.body.id}`)).body).to.deep.equal(r.body);
    const del = await as(su).del(`/providercalls/${r.body.id}`);
    expect(del.status).to.equal(200);
    expect(del.body.tm_delete).to.not.equal('9999-01-01 00:00:00.000000');
    expect((await as(su).get(`/providercalls/${r.body.id}`)).body.error.reason).to.equal('PROVIDERCALL_NOT_FOUND');
    expect((await as(su).del(`/providercalls/${r.body.id}`)).status).to.equal(404);
    expect(await db('calls').where({ id: r.body.call_ids[0] }).first(), 'the call stays').to.not.equal(undefined);
  });

  it('only a ProjectSuperAdmin; an unknown provider, non-tel destinations and bad input are refused', async () => {
    const some = await provider(await freePort(), 'p');
    const ok = { provider_id: some.id, source: { type: 'tel', target: '+15550009999' }, destinations: [{ type: 'tel', target: '+15557650002' }], actions: [{ type: 'hangup' }] };
    expect((await as(admin).post('/providercalls', ok)).status).to.equal(403);
    expect((await as(admin).get('/providercalls')).status).to.equal(403);
    expect((await as(admin).get(`/providercalls/${newId()}`)).status).to.equal(403);
    const unknown = await as(su).post('/providercalls', { ...ok, provider_id: newId() });
    expect([unknown.status, unknown.body.error.reason]).to.deep.equal([404, 'PROVIDER_NOT_FOUND']);
    const sip = await as(su).post('/providercalls', { ...ok, destinations: [{ type: 'sip', target: 'x@127.0.0.1' }] });
    expect(sip.status).to.equal(400);
    for (const body of [
      { ...ok, provider_id: 'x' },
      { ...ok, destinations: [] },
      { source: ok.source, destinations: ok.destinations },
      { ...ok, anonymous: 'maybe' },
    ]) {
      expect((await as(su).post('/providercalls', body)).status, JSON.stringify(body)).to.equal(400);
    }
    expect((await as(su).get('/providercalls?provider_id=x')).status).to.equal(400);
    expect((await as(su).get('/providercalls/x')).status).to.equal(400);
  });
});
