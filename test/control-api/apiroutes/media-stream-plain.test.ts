// GET .../media_stream without an Upgrade header: a plain HTTP request to a WebSocket endpoint gets a
// clear 400 in the error envelope (not 404 ROUTE_NOT_FOUND), after the usual credential check.
import { expect } from 'chai';
import request from 'supertest';
import { startHarness, actors, reset, as, type Harness, type Actors } from '../resources/support';
import { newId } from '../../../core/ids';

describe('media_stream without an Upgrade header', function () {
  this.timeout(20000);
  let h: Harness;
  let a: Actors;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());
  beforeEach(async () => {
    await reset();
    a = await actors(h);
  });

  for (const group of ['calls', 'conferences']) {
    it(`GET /${group}/{id}/media_stream answers 400 naming the upgrade`, async () => {
      const r = await as(h, a.admin).get(`/v1.0/${group}/${newId()}/media_stream`).query({ encapsulation: 'rtp' });
      expect(r.status).to.equal(400);
      expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
      expect(r.body.error.message).to.match(/WebSocket/);
    });
    it(`GET /${group}/{id}/media_stream needs credentials and manager level`, async () => {
      expect((await request(h.app).get(`/v1.0/${group}/${newId()}/media_stream`)).status).to.equal(401);
      const r = await as(h, a.agent).get(`/v1.0/${group}/${newId()}/media_stream`);
      expect(r.status).to.equal(403);
      expect(r.body.error.reason).to.equal('PERMISSION_DENIED');
    });
    it(`GET /${group}/not-a-uuid/media_stream is INVALID_ID`, async () => {
      const r = await as(h, a.admin).get(`/v1.0/${group}/nope/media_stream`);
      expect(r.status).to.equal(400);
      expect(r.body.error.reason).to.equal('INVALID_ID');
    });
  }
});
