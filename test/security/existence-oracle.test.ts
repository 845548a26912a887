/**
 * Finding 10: a create with a client-chosen id (POST /activeflows, POST /conferences; the only
 * create routes whose body takes `id`) must not tell whether another customer holds that id. An id
 * of another customer, live or deleted, gets exactly the answer of any refused id (the nil UUID);
 * the caller's own id stays the spec's duplicate create (409 ALREADY_EXISTS); a fresh id passes.
 */
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { loadRoutes } from '../../control-api/routes';
import { conferencesRepo } from '../../core/repos/conferences';
import { EMPTY_UUID, newId } from '../../core/ids';

type Answer = { status: number; reason: unknown; message: unknown; details: unknown };

describe('security: no existence oracle on client-chosen ids (finding 10)', function () {
  this.timeout(30_000);
  let t: TestApp;
  let a: Fixture;
  let b: Fixture;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    a = await createFixture(t.ctx);
    b = await createFixture(t.ctx);
  });
  after(async () => t.close());

  const post = (f: Fixture, path: string, body: object) => request(t.app).post(`/v1.0${path}`).query({ accesskey: f.accesskey }).send(body);
  const answer = (res: request.Response): Answer => ({
    status: res.status,
    reason: res.body.error?.reason,
    message: res.body.error?.message,
    details: res.body.error?.details,
  });

  const activeflow = (id: string) => ({ id, actions: [{ type: 'answer' }] });
  const conference = (id: string) => ({ id, type: 'conference' });

  it('only /activeflows and /conferences take a client-chosen id on create', () => {
    const withId = loadRoutes()
      .filter((r) => r.method === 'post' && r.body && 'shape' in r.body && 'id' in (r.body.shape as object))
      .map((r) => r.path);
    expect(withId).to.deep.equal(['/activeflows', '/conferences']);
  });

  it("activeflows: another customer's id is refused exactly like the nil UUID, without saying it exists", async () => {
    const owned = await post(b, '/activeflows', activeflow(newId()));
    expect(owned.status, JSON.stringify(owned.body)).to.equal(201);
    const foreign = answer(await post(a, '/activeflows', activeflow(owned.body.id as string)));
    expect(foreign.reason).to.not.equal('ALREADY_EXISTS');
    expect(String(foreign.message)).to.not.match(/exist/i);
    const refused = answer(await post(a, '/activeflows', activeflow(EMPTY_UUID)));
    expect(refused.status).to.equal(400);
    expect(foreign).to.deep.equal(refused);
    // the owner's own duplicate is a duplicate create
    expect(answer(await post(b, '/activeflows', activeflow(owned.body.id as string)))).to.include({ status: 409, reason: 'ALREADY_EXISTS' });
    // a fresh id is taken as given
    const fresh = newId();
    const ok = await post(a, '/activeflows', activeflow(fresh));
    expect([ok.status, ok.body.id]).to.deep.equal([201, fresh]);
  });

  it("conferences: another customer's id, live or deleted, is refused exactly like the nil UUID", async () => {
    const repo = conferencesRepo(t.ctx.db);
    const live = await repo.create({ customer_id: b.customer.id, type: 'conference' });
    const gone = await repo.create({ customer_id: b.customer.id, type: 'conference' });
    await repo.softDelete(b.customer.id, gone.id);
    const foreign = [live.id, gone.id, live.id.toUpperCase()];
    const answers = await Promise.all(foreign.map(async (id) => answer(await post(a, '/conferences', conference(id)))));
    expect(answers.map((x) => x.reason)).to.not.include('ALREADY_EXISTS');
    const refused = answer(await post(a, '/conferences', conference(EMPTY_UUID)));
    expect(refused.status).to.equal(400);
    for (const x of answers) expect(x).to.deep.equal(refused);
    expect(answer(await post(b, '/conferences', conference(live.id)))).to.include({ status: 409, reason: 'ALREADY_EXISTS' });
    // a fresh id passes the id check (no media node hosts conferences here: 503 comes after)
    const fresh = answer(await post(a, '/conferences', conference(newId())));
    expect(fresh.status).to.not.be.oneOf([400, 409]);
  });
});
