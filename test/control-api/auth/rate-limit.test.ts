import { expect } from 'chai';
import request from 'supertest';
import { clock } from '../../../core/clock';
import { startHarness, type Harness } from './harness';

describe('/auth rate limits (per IP, spec Limits)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ rateLimitScale: 1 }); // fresh key prefix: empty buckets
    clock.setNow(Date.now()); // frozen: no refill during the burst
  });
  afterEach(async () => {
    clock.reset();
    await h.close();
  });

  const expect429 = (res: request.Response) => {
    expect(res.status).to.equal(429);
    expect(res.body.error).to.include({ status: 'RESOURCE_EXHAUSTED', reason: 'RATE_LIMIT_EXCEEDED' });
    expect(res.body.error.details[0].limited_by).to.equal('ip');
    expect(Number(res.headers['retry-after'])).to.be.at.least(1);
  };

  // The limiter fails open when Redis answers slower than its timeout (a loaded CI machine): a refused
  // request is then let through. So a 429 is awaited over a few attempts; an exact-edge check is core's.
  async function expect429Soon(send: () => Promise<request.Response>) {
    let last: request.Response | undefined;
    for (let i = 0; i < 3; i++) {
      last = await send();
      if (last.status === 429) return expect429(last);
    }
    expect429(last!);
  }

  it('one shared limiter for /auth/*: 20 pass, the 21st gets 429 with Retry-After; refills at 10/s', async () => {
    const paths = ['/auth/email-verify-resend', '/auth/password-forgot', '/auth/login', '/auth/signup'];
    for (let i = 0; i < 20; i++) {
      const res = await request(h.app)
        .post(paths[i % paths.length])
        .send({});
      expect(res.status, `request ${i + 1}`).to.not.equal(429);
    }
    await expect429Soon(() => request(h.app).post('/auth/email-verify-resend').send({}));
    await expect429Soon(() => request(h.app).get('/auth/email-verify?token=x'));
    clock.advance(1000); // ten tokens back (10/s)
    expect((await request(h.app).post('/auth/email-verify-resend').send({})).status).to.equal(200);
  });

  it('/auth/unregister and /auth/delegate are tracked separately from the rest', async () => {
    for (let i = 0; i < 21; i++) await request(h.app).post('/auth/email-verify-resend').send({});
    await expect429Soon(() => request(h.app).post('/auth/signup').send({}));
    // the protected bucket is untouched: the credential middleware answers
    const un = await request(h.app).post('/auth/unregister').send({});
    expect(un.status).to.equal(401);
    for (let i = 0; i < 18; i++) await request(h.app).post('/auth/delegate').send({});
    expect((await request(h.app).delete('/auth/unregister')).status).to.equal(401); // the 20th of the protected bucket
    await expect429Soon(() => request(h.app).post('/auth/delegate').send({}));
  });
});
