/**
 * GET /v1.0/quality_alarms (issue 38, docs/observability.md "Quality alarms"): call_quality_alarm
 * events published on the real event stream (Redis) and stored by the real event store (Postgres),
 * then listed through the real control-api app: a ProjectSuperAdmin across customers, a customer
 * admin its own only, pagination, filters, bad input and refusals in the spec's envelope.
 */
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createAgent, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { eventStreamKey, eventPublisher } from '../../core/events/bus';
import { publishResourceEvent } from '../../core/events/catalogue';
import { startEventStore } from '../../core/events/store';
import { newId } from '../../core/ids';
import { Permission } from '../../core/permissions';
import { until } from '../../testkit/media-app/harness';

interface Alarm {
  id: string;
  customer_id: string;
  call_id: string;
  timestamp: string;
  direction: string;
  metric: string;
  state: string;
  value: number;
  threshold: number;
  codec: string | null;
}

describe('Quality alarms across customers: GET /v1.0/quality_alarms', function () {
  this.timeout(60_000);
  let t: TestApp;
  let root: Fixture;
  let a: Fixture;
  let b: Fixture;
  let managerToken = '';
  let store: { close(): Promise<void> } | undefined;
  const callA = newId();
  const callB = newId();
  let start = '';
  let end = '';

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    root = await createFixture(t.ctx, { permission: Permission.ProjectSuperAdmin | Permission.CustomerAdmin });
    a = await createFixture(t.ctx);
    b = await createFixture(t.ctx);
    managerToken = (await createAgent(t.ctx, a.customer.id, Permission.CustomerManager)).token;
    store = await startEventStore(t.ctx.db, t.ctx.redis, { stream: eventStreamKey(t.ctx.config.redisKeyPrefix), group: `quality-alarms-${newId()}` });
    start = new Date(Date.now() - 60_000).toISOString();
    const bus = eventPublisher(t.ctx);
    const alarm = (cid: string, call: string, direction: string, metric: string, state: string, value: number, threshold: number) =>
      publishResourceEvent(bus, 'call_quality_alarm', { id: call, customer_id: cid, call_id: call, activeflow_id: null, codec: 'PCMU', direction, metric, state, value, threshold });
    // A: jitter raised then cleared on `in`, MOS raised on `out`; B: loss raised
    await alarm(a.customer.id, callA, 'in', 'jitter_ms', 'raised', 41.5, 30);
    await alarm(a.customer.id, callA, 'in', 'jitter_ms', 'cleared', 12, 30);
    await alarm(a.customer.id, callA, 'out', 'mos', 'raised', 3.1, 3.5);
    await alarm(b.customer.id, callB, 'in', 'loss_pct', 'raised', 6.2, 3);
    await until(async () => Number(((await t.ctx.db('events').whereIn('resource_id', [callA, callB]).count('* as n')) as { n: string }[])[0]!.n) === 4, 20_000, 'the alarms stored');
    end = new Date(Date.now() + 60_000).toISOString();
  });
  after(async () => {
    await store?.close();
    await t?.close();
  });

  const list = (token: string, q: Record<string, string>) =>
    request(t.app)
      .get('/v1.0/quality_alarms')
      .set('Authorization', `Bearer ${token}`)
      .query({ start, end, ...q });
  const ours = (r: Alarm[]) => r.filter((x) => x.call_id === callA || x.call_id === callB);

  it("a ProjectSuperAdmin lists every customer's alarms of the range, newest first, with the numbers", async () => {
    const res = await list(root.token, {});
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.next_page_token).to.equal('');
    const r = ours(res.body.result as Alarm[]);
    expect(r.map((x) => [x.customer_id, x.metric, x.state])).to.deep.equal([
      [b.customer.id, 'loss_pct', 'raised'],
      [a.customer.id, 'mos', 'raised'],
      [a.customer.id, 'jitter_ms', 'cleared'],
      [a.customer.id, 'jitter_ms', 'raised'],
    ]);
    expect(r[3]).to.deep.include({ call_id: callA, direction: 'in', value: 41.5, threshold: 30, codec: 'PCMU' });
    expect(r[3]!.timestamp).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    // one customer, and the filters
    const onlyB = (await list(root.token, { customer_id: b.customer.id })).body.result as Alarm[];
    expect(onlyB.map((x) => x.call_id)).to.deep.equal([callB]);
    const raisedIn = ours((await list(root.token, { direction: 'in', state: 'raised' })).body.result as Alarm[]);
    expect(raisedIn.map((x) => x.metric)).to.deep.equal(['loss_pct', 'jitter_ms']);
    const jitter = (await list(root.token, { customer_id: a.customer.id, metric: 'jitter_ms' })).body.result as Alarm[];
    expect(jitter.map((x) => x.state)).to.deep.equal(['cleared', 'raised']);
    // a range before them: none
    const earlier = await list(root.token, { start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00Z', customer_id: a.customer.id });
    expect(earlier.body.result).to.deep.equal([]);
  });

  it('pages through with page_size / page_token, nothing skipped or repeated', async () => {
    const p1 = await list(root.token, { customer_id: a.customer.id, page_size: '2' });
    expect(p1.status).to.equal(200);
    expect(p1.body.result).to.have.length(2);
    expect(p1.body.next_page_token).to.be.a('string').and.not.equal('');
    const p2 = await list(root.token, { customer_id: a.customer.id, page_size: '2', page_token: p1.body.next_page_token as string });
    expect(p2.body.result).to.have.length(1);
    expect(p2.body.next_page_token).to.equal('');
    const ids = [...(p1.body.result as Alarm[]), ...(p2.body.result as Alarm[])].map((x) => x.id);
    expect(new Set(ids).size).to.equal(3);
    expect((p2.body.result as Alarm[])[0]).to.deep.include({ metric: 'jitter_ms', state: 'raised' });
  });

  it('a customer admin sees its own alarms only; another customer, a manager and no credentials are refused', async () => {
    const own = await list(a.token, {});
    expect(own.status).to.equal(200);
    const r = own.body.result as Alarm[];
    expect(r).to.have.length(3);
    expect(r.every((x) => x.customer_id === a.customer.id)).to.equal(true);
    expect((await list(a.token, { customer_id: a.customer.id })).body.result).to.have.length(3);
    // an accesskey of the customer: the same scope
    const byKey = await request(t.app).get('/v1.0/quality_alarms').query({ start, end, accesskey: b.accesskey });
    expect((byKey.body.result as Alarm[]).map((x) => x.call_id)).to.deep.equal([callB]);

    const other = await list(a.token, { customer_id: b.customer.id });
    expect(other.status).to.equal(403);
    expect(other.body.error.reason).to.equal('PERMISSION_DENIED');
    expect(JSON.stringify(other.body)).to.not.include(callB);
    const manager = await list(managerToken, {});
    expect(manager.status).to.equal(403);
    expect(manager.body.error.reason).to.equal('PERMISSION_DENIED');
    const anon = await request(t.app).get('/v1.0/quality_alarms').query({ start, end });
    expect(anon.status).to.equal(401);
  });

  it('refuses a missing or bad range, bad filters and a bad page token with the error envelope', async () => {
    const cases: [Record<string, string>, string, string?][] = [
      [{ start: '' }, 'start'],
      [{ start: 'yesterday' }, 'start'],
      [{ start: '2026-02-30T00:00:00Z' }, 'start'],
      [{ end: '2026-03-01T00:00:00' }, 'end'],
      [{ start: '2026-03-02T00:00:00Z', end: '2026-03-01T00:00:00Z' }, 'end'],
      [{ start: '2026-03-01T00:00:00Z', end: '2026-04-01T00:00:01Z' }, 'end'],
      [{ customer_id: 'not-a-uuid' }, 'customer_id', 'INVALID_ID'],
      [{ metric: 'volume' }, 'metric'],
      [{ direction: 'sideways' }, 'direction'],
      [{ state: 'open' }, 'state'],
      [{ page_token: 'yesterday' }, 'page_token'],
      [{ page_size: 'ten' }, 'page_size'],
    ];
    for (const [extra, field, reason] of cases) {
      const res = await list(root.token, extra);
      expect(res.status, JSON.stringify(extra)).to.equal(400);
      expect(res.body.error.reason, JSON.stringify(extra)).to.equal(reason ?? 'INVALID_REQUEST_PARAMETER');
      expect(res.body.error.request_id).to.be.a('string');
      expect(JSON.stringify(res.body.error.details ?? res.body.error.message)).to.contain(field);
    }
    const missing = await request(t.app).get('/v1.0/quality_alarms').set('Authorization', `Bearer ${root.token}`).query({ start });
    expect(missing.status).to.equal(400);
    expect(missing.body.error.reason).to.equal('MISSING_REQUEST_PARAMETER');
  });

  it('is documented in the OpenAPI document', async () => {
    const res = await request(t.app).get('/v1.0/openapi.json');
    const op = res.body.paths['/quality_alarms']?.get;
    expect(op, 'GET /quality_alarms documented').to.be.an('object');
    const names = (op.parameters as { name: string }[]).map((p) => p.name);
    expect(names).to.include.members(['start', 'end', 'customer_id', 'metric', 'direction', 'state', 'page_size', 'page_token']);
  });
});
