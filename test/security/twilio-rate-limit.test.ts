/**
 * Issue 52, finding 3: the Twilio-compatible API (/2010-04-01) is limited as /v1.0 is. Per address,
 * every request counts (wrong AuthTokens included, as wrong credentials count on /v1.0): the v1_ip
 * bucket (burst 400) is shared by both APIs. Per account, after basic auth, the customer bucket that
 * /v1.0's access keys use (burst 33). A refusal is Twilio's error (code 20429, message, more_info,
 * status 429) with Retry-After. Real control-api, real Redis; the clock is frozen so no token comes
 * back during a burst.
 */
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { clock } from '../../core/clock';
import { TIERS } from '../../core/ratelimit';
import { accountSid } from '../../core/twilio/sids';
import { twilioAuthToken } from '../../core/twilio/auth-token';

function expectTwilio429(res: request.Response): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(429);
  expect(res.body).to.deep.equal({ code: 20429, message: res.body.message, more_info: 'https://www.twilio.com/docs/errors/20429', status: 429 });
  expect(res.body.message).to.be.a('string').and.not.equal('');
  expect(Number(res.headers['retry-after'])).to.be.at.least(1);
}

describe('security: rate limits of the Twilio-compatible API (issue 52, finding 3)', function () {
  this.timeout(120_000);
  let t: TestApp;
  let f: Fixture;
  beforeEach(async () => {
    clock.setNow(Date.now());
    t = await buildTestApp(); // a fresh key prefix: empty buckets
    f = await createFixture(t.ctx);
  });
  afterEach(async () => {
    clock.reset();
    await t.close();
  });

  const sid = () => accountSid(f.customer.id);
  const calls = (token: string) => request(t.app).get(`/2010-04-01/Accounts/${sid()}/Calls.json`).auth(sid(), token);

  it('wrong AuthTokens from one address: 429 once the per-address bucket is spent, and /v1.0 shares it', async () => {
    const burst = TIERS.v1_ip.burst;
    const statuses: number[] = [];
    let refused: request.Response | null = null;
    for (let i = 0; i < burst + 20 && !refused; i++) {
      const res = await calls(`wrong${i}`.padEnd(32, '0'));
      statuses.push(res.status);
      if (res.status === 429) refused = res;
    }
    expect(statuses.slice(0, burst), 'the bucket: wrong tokens answered 401').to.deep.equal(Array(burst).fill(401));
    expect(statuses.length, 'refused right after the bucket').to.equal(burst + 1);
    expectTwilio429(refused!);
    // the right token waits too, and /v1.0 from the same address is refused: one bucket
    expectTwilio429(await calls(twilioAuthToken(t.ctx.config.jwtSecret, f.customer.id, 0)));
    const v1 = await request(t.app).get('/v1.0/customer').query({ accesskey: f.accesskey });
    expect(v1.status).to.equal(429);
    expect(v1.body.error.details[0].limited_by).to.equal('ip');
  });

  it('per account: the customer bucket of /v1.0 access keys, shared with them', async () => {
    const token = twilioAuthToken(t.ctx.config.jwtSecret, f.customer.id, 0);
    const burst = TIERS.customer.burst;
    const half = Math.floor(burst / 2);
    const statuses: number[] = [];
    for (let i = 0; i < half; i++) statuses.push((await calls(token)).status);
    for (let i = half; i < burst; i++) statuses.push((await request(t.app).get('/v1.0/customer').query({ accesskey: f.accesskey })).status);
    expect(statuses).to.deep.equal(Array(burst).fill(200));
    expectTwilio429(await calls(token));
    // another account is not affected
    const g = await createFixture(t.ctx);
    const other = await request(t.app)
      .get(`/2010-04-01/Accounts/${accountSid(g.customer.id)}/Calls.json`)
      .auth(accountSid(g.customer.id), twilioAuthToken(t.ctx.config.jwtSecret, g.customer.id, 0));
    expect(other.status).to.equal(200);
    // one token back after one emission interval
    clock.advance(Math.ceil(1000 / TIERS.customer.rate) + 5);
    expect((await calls(token)).status).to.equal(200);
    expectTwilio429(await calls(token));
  });
});
