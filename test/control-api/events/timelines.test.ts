import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../../testkit/api';
import { EventPublisher } from '../../../core/events/bus';
import { publishResourceEvent } from '../../../core/events/catalogue';
import { startEventStore } from '../../../core/events/store';
import { newId, EMPTY_UUID } from '../../../core/ids';

describe('events store, /timelines and /aggregated-events', function () {
  this.timeout(30_000);
  let t: TestApp;
  let f: Fixture;
  let store: { close(): Promise<void> };
  const stream = `test-store-${newId()}`;
  const callId = newId();
  const afId = newId();

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    f = await createFixture(t.ctx);
    store = await startEventStore(t.ctx.db, t.ctx.redis, { stream });
    const pub = new EventPublisher(t.ctx.redis, stream);
    await t.ctx.db('calls').insert({
      id: callId,
      customer_id: f.customer.id,
      owner_id: EMPTY_UUID,
      flow_id: EMPTY_UUID,
      activeflow_id: afId,
      master_call_id: EMPTY_UUID,
      recording_id: EMPTY_UUID,
      groupcall_id: EMPTY_UUID,
      source: JSON.stringify({ type: 'tel', target: '+15550001111' }),
      destination: JSON.stringify({ type: 'tel', target: '+15550002222' }),
      status: 'dialing',
      direction: 'outgoing',
      tm_create: new Date(),
    });
    await publishResourceEvent(pub, 'activeflow_created', { id: afId, customer_id: f.customer.id, status: 'running' });
    for (const ty of ['call_created', 'call_ringing', 'call_progressing', 'call_hangup'] as const) {
      await publishResourceEvent(pub, ty, { id: callId, customer_id: f.customer.id, activeflow_id: afId });
    }
    await publishResourceEvent(pub, 'call_created', { id: newId(), customer_id: f.customer.id, activeflow_id: EMPTY_UUID });
    // Published twice (a redelivery) is stored once.
    const end = Date.now() + 10_000;
    while (Number(((await t.ctx.db('events').where({ customer_id: f.customer.id }).count({ n: '*' })) as { n: string }[])[0]!.n) < 6) {
      if (Date.now() > end) throw new Error('events not stored');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  after(async () => {
    await store.close();
    await t.ctx.redis.del(stream);
    await t.close();
  });

  const api = (p: string, q: Record<string, string> = {}) =>
    request(t.app)
      .get(`/v1.0${p}`)
      .query({ accesskey: f.accesskey, ...q });

  it("lists a call's events newest first, paged by cursor", async () => {
    const all = await api(`/timelines/calls/${callId}/events`);
    expect(all.status).to.equal(200);
    expect(all.body.result.map((e: { event_type: string }) => e.event_type)).to.deep.equal(['call_hangup', 'call_progressing', 'call_ringing', 'call_created']);
    const p1 = await api(`/timelines/calls/${callId}/events`, { page_size: '3' });
    expect(p1.body.result).to.have.length(3);
    const p2 = await api(`/timelines/calls/${callId}/events`, { page_size: '3', page_token: p1.body.next_page_token });
    expect(p2.body.result.map((e: { event_type: string }) => e.event_type)).to.deep.equal(['call_created']);
    expect(p2.body.next_page_token).to.equal('');
  });

  it('aggregates an activeflow run by activeflow_id or call_id', async () => {
    const a = await api('/aggregated-events', { activeflow_id: afId });
    expect(a.body.result).to.have.length(5);
    const b = await api('/aggregated-events', { call_id: callId, page_size: '5000' });
    expect(b.body.result).to.deep.equal(a.body.result);
  });

  it('refuses bad input', async () => {
    expect((await api(`/timelines/widgets/${callId}/events`)).status).to.equal(400);
    expect((await api('/timelines/calls/nope/events')).body.error.reason).to.equal('INVALID_ID');
    expect((await api(`/timelines/calls/${callId}/events`, { page_token: 'x' })).status).to.equal(400);
    expect((await api('/aggregated-events')).body.error.reason).to.equal('MISSING_REQUEST_PARAMETER');
    expect((await api('/aggregated-events', { activeflow_id: afId, call_id: callId })).status).to.equal(400);
    expect((await api('/aggregated-events', { call_id: newId() })).status).to.equal(404);
    const other = await createFixture(t.ctx);
    const o = await request(t.app).get(`/v1.0/timelines/calls/${callId}/events`).query({ accesskey: other.accesskey });
    expect(o.body.result).to.have.length(0);
  });
});
