/**
 * Issue 52, finding 2: a stored AI vendor key followed a changed URL. A manager changed an AI's
 * engine_url, wrote the masked key back (or left it out), and the next LLM request carried the
 * stored key to the new host. A stored secret now goes only where it was stored for: moving the
 * place with the secret kept (masked or left out) is 400 INVALID_ARGUMENT naming the secret's field
 * (core/secrets/key-destination.ts). Checked end to end with two real LLM servers on loopback (the
 * second one must never see the key), and for the other secrets kept beside a place: the AI's
 * llm_fallback key, a trunk's and a provider's registration password, a provider's auth_password.
 */
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { startLlmServer, type LlmServer } from '../../testkit/llm-server';
import { Permission } from '../../core/permissions';
import { openKey } from '../../core/secrets/keys';
import { proposalOutcome } from './proposals';

const KEY = 'sk-stored-0123456789abcdef';

function expectMustGiveAgain(res: request.Response, field: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(400);
  expect(res.body.error.reason).to.equal('INVALID_ARGUMENT');
  expect(res.body.error.details).to.deep.equal([{ field, issue: 'must be given again' }]);
  expect(res.body.error.message).to.contain(`${field} must be given again`);
  expect(JSON.stringify(res.body)).to.not.contain(KEY);
}

describe('security: a stored secret follows no changed URL (issue 52, finding 2)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let f: Fixture;
  let home: LlmServer;
  let other: LlmServer;
  const api = (token: string) => ({
    post: (path: string) => request(t.app).post(path).set('Authorization', `Bearer ${token}`),
    put: (path: string) => request(t.app).put(path).set('Authorization', `Bearer ${token}`),
    get: (path: string) => request(t.app).get(path).set('Authorization', `Bearer ${token}`),
  });

  before(async () => {
    home = await startLlmServer({ apiKey: KEY });
    other = await startLlmServer();
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } });
    f = await createFixture(t.ctx);
  });
  after(async () => {
    await t?.close();
    await home?.close();
    await other?.close();
  });

  it("an AI's engine_key: a changed engine_url with the key masked or left out is refused; the next request goes home", async () => {
    const a = api(f.token);
    const ai = await a.post('/v1.0/ais').send({ name: 'bot', engine_model: 'openai.gpt-5', engine_url: home.url, engine_key: KEY, init_prompt: 'Be helpful.' });
    expect(ai.status, JSON.stringify(ai.body)).to.equal(200);
    const masked = (await a.get(`/v1.0/ais/${ai.body.id}`)).body.engine_key as string;
    expect(masked).to.not.equal(KEY);
    // the probe's request: read, change the URL, write the masked key back
    expectMustGiveAgain(await a.put(`/v1.0/ais/${ai.body.id}`).send({ engine_url: other.url, engine_key: masked }), 'engine_key');
    expectMustGiveAgain(await a.put(`/v1.0/ais/${ai.body.id}`).send({ engine_url: other.url }), 'engine_key');
    // to the vendor's endpoint (no engine_url) is another place too
    expectMustGiveAgain(await a.put(`/v1.0/ais/${ai.body.id}`).send({ engine_url: '', engine_key: masked }), 'engine_key');
    const row = (await t.ctx.db('ais').where({ id: ai.body.id }).first())!;
    expect(row.engine_url).to.equal(home.url);
    // the next request still goes home with the key; the other host saw nothing
    const out = await proposalOutcome(t.app, f.token, ai.body.id);
    expect(out.status, out.error).to.not.equal('error');
    expect(home.authHeaders).to.include(`Bearer ${KEY}`);
    expect(other.requests).to.have.length(0);
    expect(other.authHeaders.join()).to.not.contain(KEY);
    // the same origin (another path) keeps the masked key; a new key with a new URL is taken
    const samePlace = await a.put(`/v1.0/ais/${ai.body.id}`).send({ engine_url: `${home.url}/`, engine_key: masked, name: 'bot 2' });
    expect(samePlace.status, JSON.stringify(samePlace.body)).to.equal(200);
    expect(openKey((await t.ctx.db('ais').where({ id: ai.body.id }).first())!.engine_key)).to.equal(KEY);
    const moved = await a.put(`/v1.0/ais/${ai.body.id}`).send({ engine_url: other.url, engine_key: 'sk-other-key-0000' });
    expect(moved.status, JSON.stringify(moved.body)).to.equal(200);
  });

  it("an AI's llm_fallback key: a changed llm_fallback.engine_url with the key masked is refused", async () => {
    const a = api(f.token);
    const fallback = { engine_model: 'openai.gpt-5-mini', engine_url: home.url, engine_key: KEY };
    const ai = await a.post('/v1.0/ais').send({ name: 'fb', engine_model: 'openai.gpt-5', engine_url: home.url, engine_key: KEY, parameter: { llm_fallback: fallback } });
    expect(ai.status, JSON.stringify(ai.body)).to.equal(200);
    const shown = (await a.get(`/v1.0/ais/${ai.body.id}`)).body.parameter.llm_fallback as typeof fallback;
    expect(shown.engine_key).to.not.equal(KEY);
    const res = await a.put(`/v1.0/ais/${ai.body.id}`).send({ parameter: { llm_fallback: { ...shown, engine_url: other.url } } });
    expectMustGiveAgain(res, 'parameter.llm_fallback.engine_key');
    const kept = await a.put(`/v1.0/ais/${ai.body.id}`).send({ parameter: { llm_fallback: shown } });
    expect(kept.status, JSON.stringify(kept.body)).to.equal(200);
  });

  it("a trunk's registration password does not follow a changed registrar", async () => {
    const a = api(f.token);
    const registration = { registrar: 'sip.carrier-a.example', username: 'acct', password: KEY };
    const trunk = await a.post('/v1.0/trunks').send({ domain_name: `reg${Date.now()}`, auth_types: ['basic'], username: 'pbx', password: 'trunk-secret-1', registration });
    expect(trunk.status, JSON.stringify(trunk.body)).to.equal(200);
    const moved = await a.put(`/v1.0/trunks/${trunk.body.id}`).send({ registration: { registrar: 'sip.evil.example', username: 'acct' } });
    expectMustGiveAgain(moved, 'registration.password');
    expect((await a.get(`/v1.0/trunks/${trunk.body.id}`)).body.registration.registrar).to.equal('sip.carrier-a.example');
    const same = await a.put(`/v1.0/trunks/${trunk.body.id}`).send({ registration: { registrar: 'SIP.carrier-a.example', username: 'acct2' } });
    expect(same.status, JSON.stringify(same.body)).to.equal(200);
  });

  it("a provider's auth_password and registration password do not follow a changed host", async () => {
    const su = await createFixture(t.ctx, { permission: Permission.ProjectSuperAdmin });
    const a = api(su.token);
    const p = await a
      .post('/v1.0/providers')
      .send({ hostname: 'gw.carrier-a.example', auth_username: 'u', auth_password: KEY, registration: { registrar: 'gw.carrier-a.example', username: 'u', password: KEY } });
    expect(p.status, JSON.stringify(p.body)).to.equal(200);
    expectMustGiveAgain(await a.put(`/v1.0/providers/${p.body.id}`).send({ hostname: 'gw.evil.example' }), 'auth_password');
    expectMustGiveAgain(await a.put(`/v1.0/providers/${p.body.id}`).send({ registration: { registrar: 'gw.evil.example', username: 'u' } }), 'registration.password');
    expect((await a.get(`/v1.0/providers/${p.body.id}`)).body.hostname).to.equal('gw.carrier-a.example');
    const given = await a.put(`/v1.0/providers/${p.body.id}`).send({ hostname: 'gw.carrier-b.example', auth_password: 'new-secret' });
    expect(given.status, JSON.stringify(given.body)).to.equal(200);
    const detail = await a.put(`/v1.0/providers/${p.body.id}`).send({ detail: 'same host' });
    expect(detail.status, JSON.stringify(detail.body)).to.equal(200);
  });
});
