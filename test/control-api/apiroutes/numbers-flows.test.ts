// PUT /numbers/{id}/flow_ids and /metadata (number_updated published), POST /flows/{id} and
// /conferences/{id} direct-hash-regenerate (conference_updated published): permissions, bad input.
import { expect } from 'chai';
import { as, EMPTY } from '../resources/support';
import { useParties } from './support';
import { eventStreamKey } from '../../../core/events/bus';
import { newId } from '../../../core/ids';

describe('numbers flow_ids and metadata; flow and conference direct hashes', function () {
  this.timeout(20000);
  const pt = useParties();
  /** Event types published for one resource id since the test began. */
  const eventsOf = async (id: string) =>
    (await pt.h.t.ctx.redis.xrange(eventStreamKey(pt.h.t.ctx.config.redisKeyPrefix), '-', '+'))
      .map(([, fields]) => JSON.parse(fields[1]!) as { event_type: string; resource_id: string; data: Record<string, unknown> })
      .filter((e) => e.resource_id === id);
  const flow = async (tok: string) =>
    (
      await as(pt.h, tok)
        .post('/v1.0/flows')
        .send({ actions: [{ type: 'answer' }] })
        .expect(200)
    ).body.id as string;
  const number = async () =>
    (
      await as(pt.h, pt.a.admin)
        .post('/v1.0/numbers')
        .send({ number: `+899${String(Date.now()).slice(-9)}` })
        .expect(200)
    ).body.id as string;

  it('flow_ids sets both flows (empty UUID unsets), publishes number_updated; refuses foreign flows and bad input', async () => {
    const n = await number();
    const f1 = await flow(pt.a.admin);
    const r = await as(pt.h, pt.a.manager).put(`/v1.0/numbers/${n}/flow_ids`).send({ call_flow_id: f1, message_flow_id: EMPTY });
    expect([r.status, r.body.call_flow_id, r.body.message_flow_id]).to.deep.equal([200, f1, EMPTY]);
    const ev = (await eventsOf(n)).filter((e) => e.event_type === 'number_updated');
    expect(ev.at(-1)?.data).to.include({ id: n, call_flow_id: f1 });

    const theirs = await flow(pt.other.admin);
    const foreign = await as(pt.h, pt.a.admin).put(`/v1.0/numbers/${n}/flow_ids`).send({ call_flow_id: theirs, message_flow_id: EMPTY });
    expect([foreign.status, foreign.body.error.reason]).to.deep.equal([404, 'FLOW_NOT_FOUND']);
    // The same check on PUT /numbers/{id} and POST /numbers (they accepted any UUID before).
    const viaPut = await as(pt.h, pt.a.admin).put(`/v1.0/numbers/${n}`).send({ message_flow_id: theirs });
    expect([viaPut.status, viaPut.body.error.reason]).to.deep.equal([404, 'FLOW_NOT_FOUND']);
    const viaPost = await as(pt.h, pt.a.admin).post('/v1.0/numbers').send({ number: '+899555000111', call_flow_id: newId() });
    expect([viaPost.status, viaPost.body.error.reason]).to.deep.equal([404, 'FLOW_NOT_FOUND']);
    const missing = await as(pt.h, pt.a.admin).put(`/v1.0/numbers/${n}/flow_ids`).send({ call_flow_id: f1 });
    expect([missing.status, missing.body.error.details[0]]).to.deep.equal([400, { field: 'message_flow_id', issue: 'required' }]);
    const bad = await as(pt.h, pt.a.admin).put(`/v1.0/numbers/${n}/flow_ids`).send({ call_flow_id: 'x', message_flow_id: EMPTY });
    expect([bad.status, bad.body.error.details[0].field]).to.deep.equal([400, 'call_flow_id']);
    expect((await as(pt.h, pt.a.agent).put(`/v1.0/numbers/${n}/flow_ids`).send({ call_flow_id: EMPTY, message_flow_id: EMPTY })).status).to.equal(403);
    const notMine = await as(pt.h, pt.other.admin).put(`/v1.0/numbers/${n}/flow_ids`).send({ call_flow_id: EMPTY, message_flow_id: EMPTY });
    expect([notMine.status, notMine.body.error.reason]).to.deep.equal([404, 'NUMBER_NOT_FOUND']);
    expect((await as(pt.h, pt.a.admin).get(`/v1.0/numbers/${n}`)).body.call_flow_id, 'unchanged by the refusals').to.equal(f1);
  });

  it('metadata merges rtp_debug, publishes number_updated; refuses bad input', async () => {
    const n = await number();
    const r = await as(pt.h, pt.a.manager).put(`/v1.0/numbers/${n}/metadata`).send({ rtp_debug: true });
    expect([r.status, r.body.metadata]).to.deep.equal([200, { rtp_debug: true }]);
    expect((await as(pt.h, pt.a.admin).put(`/v1.0/numbers/${n}/metadata`).send({})).body.metadata).to.deep.equal({ rtp_debug: true });
    expect((await eventsOf(n)).filter((e) => e.event_type === 'number_updated')).to.have.length(2);
    for (const body of [{ rtp_debug: 1 }, { debug: true }]) {
      const b = await as(pt.h, pt.a.admin).put(`/v1.0/numbers/${n}/metadata`).send(body);
      expect([b.status, b.body.error.reason]).to.deep.equal([400, 'INVALID_ARGUMENT']);
    }
    expect((await as(pt.h, pt.a.agent).put(`/v1.0/numbers/${n}/metadata`).send({ rtp_debug: false })).status).to.equal(403);
    expect((await as(pt.h, pt.a.admin).put(`/v1.0/numbers/${newId()}/metadata`).send({ rtp_debug: false })).body.error.reason).to.equal('NUMBER_NOT_FOUND');
  });

  it("flow direct-hash-regenerate gives a new 12-hex hash each time; manager level; another customer's flow is not found", async () => {
    const f = await flow(pt.a.admin);
    expect((await as(pt.h, pt.a.admin).get(`/v1.0/flows/${f}`)).body.direct_hash).to.equal('');
    const r1 = await as(pt.h, pt.a.manager).post(`/v1.0/flows/${f}/direct-hash-regenerate`);
    const r2 = await as(pt.h, pt.a.manager).post(`/v1.0/flows/${f}/direct-hash-regenerate`);
    expect(r1.status).to.equal(200);
    expect(r1.body.direct_hash).to.match(/^[0-9a-f]{12}$/);
    expect(r2.body.direct_hash)
      .to.match(/^[0-9a-f]{12}$/)
      .and.not.equal(r1.body.direct_hash);
    expect((await as(pt.h, pt.a.admin).get(`/v1.0/flows/${f}`)).body.direct_hash).to.equal(r2.body.direct_hash);
    expect((await as(pt.h, pt.a.agent).post(`/v1.0/flows/${f}/direct-hash-regenerate`)).status).to.equal(403);
    expect((await as(pt.h, pt.other.admin).post(`/v1.0/flows/${f}/direct-hash-regenerate`)).body.error.reason).to.equal('FLOW_NOT_FOUND');
    expect((await as(pt.h, pt.a.admin).post('/v1.0/flows/nope/direct-hash-regenerate')).body.error.reason).to.equal('INVALID_ID');
    const body = await as(pt.h, pt.a.admin).post(`/v1.0/flows/${f}/direct-hash-regenerate`).send({ direct_hash: 'mine' });
    expect([body.status, body.body.error.reason]).to.deep.equal([400, 'INVALID_ARGUMENT']);
  });

  it('conference direct-hash-regenerate changes the hash and publishes conference_updated', async () => {
    const c = (await as(pt.h, pt.a.admin).post('/v1.0/conferences').send({ type: 'conference', name: 'c' }).expect(200)).body;
    const r = await as(pt.h, pt.a.manager).post(`/v1.0/conferences/${c.id}/direct-hash-regenerate`);
    expect(r.status).to.equal(200);
    expect(r.body.direct_hash)
      .to.match(/^[0-9a-f]{12}$/)
      .and.not.equal(c.direct_hash);
    const ev = (await eventsOf(c.id)).filter((e) => e.event_type === 'conference_updated');
    expect(ev.at(-1)?.data.direct_hash).to.equal(r.body.direct_hash);
    expect((await as(pt.h, pt.a.agent).post(`/v1.0/conferences/${c.id}/direct-hash-regenerate`)).status).to.equal(403);
    expect((await as(pt.h, pt.other.admin).post(`/v1.0/conferences/${c.id}/direct-hash-regenerate`)).status).to.equal(404);
  });
});
