/**
 * Finding 11: per-account password throttling on POST /auth/login (and the password of POST
 * /auth/unregister). Per username and client address: 5 attempts free, then 1 s, 2 s, 4 s... up to
 * 60 s between attempts; per username over all addresses: 50 free, then up to 15 s, except from an
 * address that logged in to the account before. 429 RATE_LIMIT_EXCEEDED with Retry-After; unknown
 * usernames and wrong passwords answer alike. Real control-api over HTTP, real Redis; the clock is
 * moved instead of sleeping. The per-IP /auth limiter is off here (RATE_LIMIT_SCALE=0) so that
 * only the login throttle answers; client addresses come from X-Forwarded-For (TRUST_PROXY).
 */
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { clock } from '../../core/clock';

describe('security: login throttling per account (finding 11)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', TRUST_PROXY: 'true' } });
  });
  beforeEach(async () => {
    f = await createFixture(t.ctx);
    clock.setNow(Date.now());
  });
  afterEach(() => clock.reset());
  after(async () => t.close());

  const login = (username: string, password: string, from = '127.0.0.10') => request(t.app).post('/auth/login').set('X-Forwarded-For', from).send({ username, password });

  /** The 429's retry-after (seconds) and limited_by, or null when it was not a 429. */
  function throttled(res: request.Response): { retryAfter: number; limitedBy: string } | null {
    if (res.status !== 429) return null;
    expect(res.body.error).to.include({ status: 'RESOURCE_EXHAUSTED', reason: 'RATE_LIMIT_EXCEEDED' });
    return { retryAfter: Number(res.headers['retry-after']), limitedBy: res.body.error.details[0].limited_by as string };
  }

  it('60 wrong passwords from one address: 5 answered, then 429 with Retry-After, and the right one waits too', async () => {
    const statuses: number[] = [];
    let first429: request.Response | null = null;
    for (let i = 0; i < 60; i++) {
      const res = await login(f.admin.username, 'wrong-password');
      statuses.push(res.status);
      if (res.status === 429) first429 ??= res;
    }
    expect(statuses.filter((s) => s === 400)).to.have.length(5);
    expect(statuses.filter((s) => s === 429)).to.have.length(55);
    expect(throttled(first429!)).to.deep.equal({ retryAfter: 1, limitedBy: 'ip' });
    expect(throttled(await login(f.admin.username, f.password))).to.deep.equal({ retryAfter: 1, limitedBy: 'ip' });
  });

  it('delays grow 1, 2, 4... s up to 60 s; after the wait the right password works and clears the counter', async () => {
    for (let i = 0; i < 5; i++) expect((await login(f.admin.username, 'wrong')).status).to.equal(400);
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const w = throttled(await login(f.admin.username, 'wrong'))!;
      waits.push(w.retryAfter);
      clock.advance(w.retryAfter * 1000);
      expect((await login(f.admin.username, 'wrong')).status).to.equal(400);
    }
    expect(waits).to.deep.equal([1, 2, 4, 8, 16, 32, 60, 60]);
    const w = throttled(await login(f.admin.username, f.password))!;
    clock.advance(w.retryAfter * 1000);
    const ok = await login(f.admin.username, f.password);
    expect(ok.status).to.equal(200);
    expect(ok.body.token).to.be.a('string');
    for (let i = 0; i < 5; i++) expect((await login(f.admin.username, 'wrong')).status).to.equal(400);
    expect(throttled(await login(f.admin.username, 'wrong'))).to.deep.equal({ retryAfter: 1, limitedBy: 'ip' });
  });

  it('an unknown username is answered exactly like a wrong password', async () => {
    const seq = async (username: string, password: string) => {
      const out: unknown[] = [];
      for (let i = 0; i < 7; i++) {
        const res = await login(username, password, '127.0.0.20');
        out.push([res.status, res.headers['retry-after'] ?? null, res.status === 429 ? { ...res.body.error, request_id: null } : res.body]);
      }
      return out;
    };
    const known = await seq(f.admin.username, 'wrong');
    const unknown = await seq(`nobody-${f.customer.id}@example.test`, 'wrong');
    expect(unknown).to.deep.equal(known);
  });

  it('a guesser at one address does not lock the owner out at another', async () => {
    for (let i = 0; i < 10; i++) await login(f.admin.username, 'wrong', '127.0.0.66');
    expect(throttled(await login(f.admin.username, 'wrong', '127.0.0.66'))).to.not.equal(null);
    expect((await login(f.admin.username, f.password, '127.0.0.7')).status).to.equal(200);
  });

  it('over all addresses: 50 attempts, then 429 limited_by customer, except from an address that logged in before', async () => {
    expect((await login(f.admin.username, f.password, '127.0.1.1')).status).to.equal(200);
    for (let i = 0; i < 50; i++) expect((await login(f.admin.username, 'wrong', `127.0.2.${i + 1}`)).status).to.equal(400);
    expect(throttled(await login(f.admin.username, f.password, '127.0.3.1'))).to.deep.equal({ retryAfter: 1, limitedBy: 'customer' });
    expect((await login(f.admin.username, f.password, '127.0.1.1')).status).to.equal(200);
  });

  it('the password of POST /auth/unregister is throttled the same way', async () => {
    const unregister = (password: string) => request(t.app).post('/auth/unregister').set('X-Forwarded-For', '127.0.0.30').set('Authorization', `Bearer ${f.token}`).send({ password });
    for (let i = 0; i < 5; i++) expect((await unregister('wrong')).status).to.equal(400);
    expect(throttled(await unregister('wrong'))).to.deep.equal({ retryAfter: 1, limitedBy: 'ip' });
    expect(throttled(await unregister(f.password))).to.not.equal(null);
  });
});
