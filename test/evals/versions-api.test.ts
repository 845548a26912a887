// Agent versions (issue 56, docs/evals.md "Agent versions"): every create and every update that
// changes a field of an AI writes an immutable, numbered version (the full configuration, the fields
// that changed, who changed them), read through /ais/{id}/versions with its keys masked; a flow's
// ai_talk may pin one (a version the AI does not have is refused on the flow); a run over versions
// checks them, and a baseline run must be the customer's. All in the OpenAPI document.
import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { numbersRepo } from '../../core/repos/numbers';

describe('agent versions: /ais/{id}/versions, flows pinning one, runs over versions', () => {
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));
  const NUMBER = '+899560000101';
  const byKey = (r: request.Test, fx = f) => r.query({ accesskey: fx.accesskey });
  const byAgent = (r: request.Test, fx = f) => r.set('Authorization', `Bearer ${fx.token}`);
  let aiId = '';

  before(async () => {
    await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number: NUMBER, type: 'virtual' });
    const made = await byKey(request(t.app).post('/v1.0/ais'))
      .send({ name: 'desk', init_prompt: 'You answer questions about the shop.', engine_model: 'openai.gpt-test', engine_key: 'sk-versions-secret-123456' })
      .expect(200);
    aiId = made.body.id as string;
  });

  it('create is version 1 (every field, by the access key); an update that changes fields is the next, naming them and its maker', async () => {
    const v1 = await byAgent(request(t.app).get(`/v1.0/ais/${aiId}/versions/1`)).expect(200);
    expect(v1.body).to.include({ ai_id: aiId, customer_id: f.customer.id, number: 1 });
    expect(v1.body.created_by).to.deep.equal({ type: 'accesskey', id: f.accesskeyRow.id });
    expect(v1.body.changed).to.include.members(['name', 'init_prompt', 'engine_model', 'engine_key', 'parameter']);
    expect(v1.body.config).to.include({ name: 'desk', init_prompt: 'You answer questions about the shop.', engine_model: 'openai.gpt-test' });
    // the key is shown masked, never whole
    expect(JSON.stringify(v1.body)).not.to.contain('sk-versions-secret-123456');
    expect(v1.body.config.engine_key).to.be.a('string').and.not.equal('');

    await byAgent(request(t.app).put(`/v1.0/ais/${aiId}`))
      .send({ init_prompt: 'You are closed today.', detail: 'broken on purpose' })
      .expect(200);
    const v2 = await byAgent(request(t.app).get(`/v1.0/ais/${aiId}/versions/2`)).expect(200);
    expect(v2.body.changed).to.have.members(['init_prompt', 'detail']);
    expect(v2.body.created_by).to.deep.equal({ type: 'agent', id: f.admin.id });
    expect(v2.body.config).to.include({ init_prompt: 'You are closed today.', name: 'desk' });
    // version 1 is as it was
    expect((await byAgent(request(t.app).get(`/v1.0/ais/${aiId}/versions/1`)).expect(200)).body).to.deep.equal(v1.body);

    // an update that changes nothing (the masked key sent back is the stored key) makes no version
    const ai = (await byAgent(request(t.app).get(`/v1.0/ais/${aiId}`)).expect(200)).body;
    await byAgent(request(t.app).put(`/v1.0/ais/${aiId}`))
      .send({ name: ai.name, init_prompt: ai.init_prompt, engine_key: ai.engine_key })
      .expect(200);
    const list = await byAgent(request(t.app).get(`/v1.0/ais/${aiId}/versions`)).expect(200);
    expect(list.body.result.map((v: { number: number }) => v.number)).to.deep.equal([2, 1]);
  });

  it('an unknown version is 404, a bad number 400, another customer sees none', async () => {
    const r = await byAgent(request(t.app).get(`/v1.0/ais/${aiId}/versions/9`)).expect(404);
    expect(r.body.error.message).to.contain('no version 9');
    await byAgent(request(t.app).get(`/v1.0/ais/${aiId}/versions/0`)).expect(400);
    await byAgent(request(t.app).get(`/v1.0/ais/${aiId}/versions/x`)).expect(400);
    const other = await createFixture(t.ctx);
    await byAgent(request(t.app).get(`/v1.0/ais/${aiId}/versions`), other).expect(404);
    await byAgent(request(t.app).get(`/v1.0/ais/${aiId}/versions/1`), other).expect(404);
  });

  it("a flow's ai_talk pins a version it has; one it has not, a team, or another customer's AI is refused on the flow, naming the field", async () => {
    const talk = (option: Record<string, unknown>) => ({ actions: [{ type: 'answer' }, { type: 'ai_talk', option }] });
    const ok = await byAgent(request(t.app).post('/v1.0/flows'))
      .send(talk({ assistance_type: 'ai', assistance_id: aiId, ai_version: 1 }))
      .expect(200);
    expect(ok.body.actions[1].option.ai_version).to.equal(1);
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ assistance_type: 'ai', assistance_id: aiId, ai_version: 3 }, new RegExp(`AI ${aiId} has no version 3`)],
      [{ assistance_type: 'team', assistance_id: aiId, ai_version: 1 }, /assistance_type must be ai/],
      [{ ai_version: 1 }, /needs the AI/],
    ];
    for (const [option, message] of bad) {
      const r = await byAgent(request(t.app).post('/v1.0/flows')).send(talk(option)).expect(400);
      expect(r.body.error.status).to.equal('INVALID_ARGUMENT');
      expect(r.body.error.details[0]).to.include({ field: 'actions[1].option.ai_version' });
      expect(r.body.error.details[0].message).to.match(message);
    }
    const zero = await byAgent(request(t.app).post('/v1.0/flows'))
      .send(talk({ assistance_id: aiId, ai_version: 0 }))
      .expect(400);
    expect(zero.body.error.details[0].field).to.equal('actions[1].option.ai_version');
    // a PUT and an inline activeflow are checked the same way
    await byAgent(request(t.app).put(`/v1.0/flows/${ok.body.id}`))
      .send(talk({ assistance_id: aiId, ai_version: 7 }))
      .expect(400);
    const other = await createFixture(t.ctx);
    const foreign = await byAgent(request(t.app).post('/v1.0/flows'), other)
      .send(talk({ assistance_id: aiId, ai_version: 1 }))
      .expect(400);
    expect(foreign.body.error.details[0].message).to.equal(`no AI ${aiId} of this customer`);
  });

  it('a run over versions needs ai_id with them, versions the AI has, and a baseline of the customer', async () => {
    const scenario = await byAgent(request(t.app).post('/v1.0/eval_scenarios'))
      .send({ name: 'hours', target: { type: 'number', target: NUMBER }, caller: { turns: [{ wait_ms: 100 }] }, checks: [] })
      .expect(200);
    const run = (body: Record<string, unknown>) => byAgent(request(t.app).post('/v1.0/eval_runs')).send({ scenario_ids: [scenario.body.id], ...body });
    const fields = (r: request.Response) => (r.body.error.details as { field: string }[]).map((d) => d.field);
    expect(fields(await run({ versions: [1, 2] }).expect(400))).to.include('versions');
    expect(fields(await run({ ai_id: aiId, versions: [1, 5] }).expect(400))).to.deep.equal(['versions']);
    expect(fields(await run({ ai_id: aiId, versions: [1, 1] }).expect(400))).to.include('versions');
    expect(fields(await run({ ai_id: aiId, versions: [1, 2, 3] }).expect(400))).to.include('versions');
    const other = await createFixture(t.ctx);
    const theirs = await byAgent(request(t.app).post('/v1.0/ais'), other).send({ name: 'x' }).expect(200);
    expect(fields(await run({ ai_id: theirs.body.id, versions: [1] }).expect(400))).to.deep.equal(['ai_id']);
    expect(fields(await run({ baseline_run_id: '00000000-0000-4000-8000-000000000001' }).expect(400))).to.deep.equal(['baseline_run_id']);

    const made = await run({ ai_id: aiId, versions: [1, 2], calls: 2 }).expect(200);
    expect(made.body).to.include({ ai_id: aiId, status: 'running' });
    expect(made.body.versions).to.deep.equal([1, 2]);
    expect(made.body.by_version.map((v: { version: number; calls: number }) => [v.version, v.calls])).to.deep.equal([
      [1, 0],
      [2, 0],
    ]);
    expect(made.body.compare).to.include({ from_version: 1, to_version: 2 });
    const later = await run({ baseline_run_id: made.body.id }).expect(200);
    expect(later.body.baseline_run_id).to.equal(made.body.id);
    expect(later.body.baseline).to.deep.include({ run_id: made.body.id, checks: [], latency: [] });
    expect(later.body.compare).to.equal(null);
  });

  it('is in the OpenAPI document: the versions, the pin, the run fields', async () => {
    const doc = (await request(t.app).get('/v1.0/openapi.json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
    const path = (p: string) => doc.paths[Object.keys(doc.paths).find((k) => k.endsWith(p))!];
    expect(path('/ais/{id}/versions')?.get).to.be.an('object');
    expect(path('/ais/{id}/versions/{number}')?.get).to.be.an('object');
    expect(JSON.stringify(path('/ais/{id}/versions/{number}'))).to.contain('created_by');
    const runs = JSON.stringify(path('/eval_runs'));
    for (const field of ['versions', 'ai_id', 'baseline_run_id']) expect(runs).to.contain(field);
    const run = JSON.stringify(path('/eval_runs/{id}'));
    for (const field of ['by_version', 'compare', 'baseline', 'p50', 'p95', 'p99', 'ai_version']) expect(run).to.contain(field);
  });
});
