// Toll fraud (issue 13, item 3, what exists): POST /calls to a country outside the outbound
// config's destination_whitelist is refused before anything is written or queued, so no INVITE
// can leave. Premium-rate prefixes and per-customer concurrency caps do not exist yet (docs/reliability.md).
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../support/api';
import { envelopeProblem } from './api/envelope';

describe('reliability: toll fraud', function () {
  this.timeout(30_000);
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    f = await createFixture(t.ctx);
  });
  after(async () => t.close());

  const calls = async () => (await request(t.app).get('/v1.0/calls').query({ accesskey: f.accesskey })).body.result as unknown[];
  const dial = (target: string) => request(t.app).post('/v1.0/calls').query({ accesskey: f.accesskey })
    .send({ source: { type: 'tel', target: '+15550100000' }, destinations: [{ type: 'tel', target }], actions: [{ type: 'hangup' }] });

  it('destinations outside the whitelist (empty, then us only) are refused with 403 and leave no call', async () => {
    for (const target of ['+442071234567', '+882355512345', '+9005551234', '+2472345']) {
      const res = await dial(target);
      expect(res.status, `${target}: ${JSON.stringify(res.body)}`).to.equal(403);
      expect(envelopeProblem(res)).to.equal(undefined);
    }
    await request(t.app).put(`/v1.0/outbound_configs/${f.outboundConfig.id}`).query({ accesskey: f.accesskey }).send({ destination_whitelist: ['us'] }).expect(200);
    const gb = await dial('+442071234567');
    expect(gb.status).to.equal(403);
    // a mixed list is refused whole: the whitelisted destination is not dialled either
    const mixed = await request(t.app).post('/v1.0/calls').query({ accesskey: f.accesskey })
      .send({ source: { type: 'tel', target: '+15550100000' }, destinations: [{ type: 'tel', target: '+12125550100' }, { type: 'tel', target: '+442071234567' }], actions: [{ type: 'hangup' }] });
    expect(mixed.status, JSON.stringify(mixed.body)).to.be.oneOf([400, 403]); // 400 here: no route to +1 either
    expect(await calls()).to.have.length(0);
  });
});
