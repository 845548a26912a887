// The eval scenarios and runs API (issue 56, docs/evals.md): the scenario shape the issue gives is
// accepted as written and read back, bad shapes are 400s in the error envelope naming the field, a
// target must be the customer's own number, everything is the customer's alone, and a run keeps the
// scenarios as they were and starts `running` with no result. Both groups are in the OpenAPI document.
import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { numbersRepo } from '../../core/repos/numbers';

describe('eval scenarios and runs API', () => {
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));
  const NUMBER = '+899560000001';
  const auth = (r: request.Test, fx = f) => r.set('Authorization', `Bearer ${fx.token}`);
  const scenario = (over: Record<string, unknown> = {}) => ({
    name: 'opening hours',
    target: { type: 'number', target: NUMBER },
    caller: { language: 'en-US', turns: [{ wait_ms: 2500 }, { say: 'What are your opening hours?' }, { dtmf: '1' }, { hangup: true }] },
    checks: [
      { type: 'latency_under', ms: 4000 },
      { type: 'transcript_contains', role: 'agent', text: 'nine' },
    ],
    ...over,
  });
  before(async () => {
    await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number: NUMBER, type: 'virtual' });
  });

  it("accepts the issue's shape as written and reads it back (get, list, put, delete)", async () => {
    const made = await auth(request(t.app).post('/v1.0/eval_scenarios')).send(scenario()).expect(200);
    expect(made.body).to.include({ name: 'opening hours', customer_id: f.customer.id });
    expect(made.body.target).to.deep.equal({ type: 'number', target: NUMBER });
    expect(made.body.caller.turns).to.deep.equal([{ wait_ms: 2500 }, { say: 'What are your opening hours?' }, { dtmf: '1' }, { hangup: true }]);
    expect(made.body.checks).to.have.length(2);
    const id = made.body.id as string;
    expect((await auth(request(t.app).get(`/v1.0/eval_scenarios/${id}`)).expect(200)).body).to.deep.equal(made.body);
    const list = await auth(request(t.app).get('/v1.0/eval_scenarios')).expect(200);
    expect(list.body.result.map((s: { id: string }) => s.id)).to.include(id);
    const put = await auth(request(t.app).put(`/v1.0/eval_scenarios/${id}`))
      .send(scenario({ name: 'renamed' }))
      .expect(200);
    expect(put.body.name).to.equal('renamed');
    await auth(request(t.app).delete(`/v1.0/eval_scenarios/${id}`)).expect(200);
    const gone = await auth(request(t.app).get(`/v1.0/eval_scenarios/${id}`)).expect(404);
    expect(gone.body.error.reason).to.equal('RESOURCE_NOT_FOUND');
  });

  it('refuses bad shapes with 400 in the error envelope, naming the field', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [scenario({ caller: { turns: [{ say: 'hi', wait_ms: 10 }] } }), 'caller.turns.0'],
      [scenario({ caller: { turns: [{ dtmf: '12x' }] } }), 'caller.turns.0.dtmf'],
      [scenario({ caller: { turns: [] } }), 'caller.turns'],
      [scenario({ checks: [{ type: 'latency_under' }] }), 'checks.0.ms'],
      [scenario({ checks: [{ type: 'transcript_contains', role: 'judge', text: 'x' }] }), 'checks.0.role'],
      [scenario({ checks: [{ type: 'llm_judge', rubric: 'x' }] }), 'checks.0.type'],
      [scenario({ target: { type: 'number', target: '12' } }), 'target.target'],
      [scenario({ extra: 1 }), 'extra'],
    ];
    for (const [body, field] of bad) {
      const r = await auth(request(t.app).post('/v1.0/eval_scenarios')).send(body).expect(400);
      expect(r.body.error.status, field).to.equal('INVALID_ARGUMENT');
      expect(
        (r.body.error.details as { field: string }[]).map((d) => d.field),
        JSON.stringify(r.body.error),
      ).to.include(field);
    }
  });

  it("a target must be the customer's own number; another customer sees none of its scenarios or runs", async () => {
    const other = await createFixture(t.ctx);
    const r = await auth(request(t.app).post('/v1.0/eval_scenarios'), other).send(scenario()).expect(400);
    expect(r.body.error.details).to.deep.include({ field: 'target.target', issue: 'not a number of this customer' });
    const mine = (await auth(request(t.app).post('/v1.0/eval_scenarios')).send(scenario()).expect(200)).body.id as string;
    await auth(request(t.app).get(`/v1.0/eval_scenarios/${mine}`), other).expect(404);
    const refused = await auth(request(t.app).post('/v1.0/eval_runs'), other)
      .send({ scenario_ids: [mine], calls: 1, concurrency: 1 })
      .expect(404);
    expect(refused.body.error.reason).to.equal('RESOURCE_NOT_FOUND');
    const run = (
      await auth(request(t.app).post('/v1.0/eval_runs'))
        .send({ scenario_ids: [mine], calls: 2, concurrency: 2 })
        .expect(200)
    ).body.id as string;
    await auth(request(t.app).get(`/v1.0/eval_runs/${run}`), other).expect(404);
  });

  it('a run refuses a scenario whose number has since changed hands (400 naming scenario_ids)', async () => {
    const number = '+899560000002';
    await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number, type: 'virtual' });
    const id = (
      await auth(request(t.app).post('/v1.0/eval_scenarios'))
        .send(scenario({ target: { type: 'number', target: number } }))
        .expect(200)
    ).body.id as string;
    const other = await createFixture(t.ctx);
    await t.ctx.db('numbers').where({ number }).update({ customer_id: other.customer.id });
    const r = await auth(request(t.app).post('/v1.0/eval_runs'))
      .send({ scenario_ids: [id] })
      .expect(400);
    expect(r.body.error.details).to.deep.equal([{ field: 'scenario_ids', issue: 'target not a number of this customer' }]);
    expect(await t.ctx.db('eval_runs').where({ customer_id: f.customer.id }).whereRaw(`scenarios->0->>'id' = ?`, [id])).to.deep.equal([]);
  });

  it('a run starts running with no result and keeps the scenarios as they were', async () => {
    const id = (await auth(request(t.app).post('/v1.0/eval_scenarios')).send(scenario()).expect(200)).body.id as string;
    const run = await auth(request(t.app).post('/v1.0/eval_runs'))
      .send({ scenario_ids: [id], calls: 2, concurrency: 2 })
      .expect(200);
    expect(run.body).to.include({ status: 'running', calls: 2, concurrency: 2, error: '', pass_rate: null });
    expect(run.body.scenario_ids).to.deep.equal([id]);
    expect(run.body.results).to.deep.equal([]);
    await auth(request(t.app).put(`/v1.0/eval_scenarios/${id}`))
      .send(scenario({ name: 'changed after the run' }))
      .expect(200);
    const row = await t.ctx.db('eval_runs').where({ id: run.body.id }).first();
    expect(row!.scenarios[0]!.name).to.equal('opening hours');
    const got = await auth(request(t.app).get(`/v1.0/eval_runs/${run.body.id}`)).expect(200);
    expect(got.body).to.deep.equal(run.body);
    const list = await auth(request(t.app).get('/v1.0/eval_runs')).expect(200);
    expect(list.body.result.map((r: { id: string }) => r.id)).to.include(run.body.id);
    const tooMany = await auth(request(t.app).post('/v1.0/eval_runs'))
      .send({ scenario_ids: [id], calls: 51 })
      .expect(400);
    expect(tooMany.body.error.details.map((d: { field: string }) => d.field)).to.include('calls');
  });

  it('is in the OpenAPI document: both groups, with the scenario body and the run result', async () => {
    const doc = (await request(t.app).get('/v1.0/openapi.json').expect(200)).body as { paths: Record<string, Record<string, { requestBody?: unknown; tags?: string[] }>> };
    for (const [p, m] of [
      ['/eval_scenarios', 'post'],
      ['/eval_scenarios', 'get'],
      ['/eval_scenarios/{id}', 'get'],
      ['/eval_scenarios/{id}', 'put'],
      ['/eval_scenarios/{id}', 'delete'],
      ['/eval_runs', 'post'],
      ['/eval_runs', 'get'],
      ['/eval_runs/{id}', 'get'],
    ] as const) {
      const key = Object.keys(doc.paths).find((k) => k.endsWith(p));
      expect(key && doc.paths[key]![m], `${m} ${p}`).to.be.an('object');
    }
    const body = JSON.stringify(doc.paths[Object.keys(doc.paths).find((k) => k.endsWith('/eval_scenarios'))!]!.post!.requestBody);
    for (const field of ['wait_ms', 'say', 'dtmf', 'hangup', 'transcript_contains', 'latency_under']) expect(body).to.contain(field);
    const run = JSON.stringify(doc.paths[Object.keys(doc.paths).find((k) => k.endsWith('/eval_runs/{id}'))!]!.get);
    for (const field of ['call_id', 'transcript', 't_ms', 'latency_ms', 'evidence', 'passed']) expect(run).to.contain(field);
  });
});
