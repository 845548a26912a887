/**
 * Finding 2: an AI's engine_url was POSTed to without any address check, carrying the customer's
 * bearer key. Through the real API: internal literals are refused at create and update with 400
 * naming engine_url; names and redirects that lead to loopback are refused when the engine is
 * called, the internal server never sees a request (nor the key), and the error names no address
 * and echoes no answer. An allowlisted engine (a real OpenAI-compatible server) still works.
 */
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { startLlmServer, type LlmServer } from '../../testkit/llm-server';
import { proposalOutcome } from './proposals';
import { startInternalTargets, SPELLINGS, type InternalTargets } from './spellings';

const KEY = 'sk-secret-0123456789abcdef';

describe('security: AI engine_url cannot reach internal addresses (finding 2)', function () {
  this.timeout(60_000);
  let targets: InternalTargets;
  let llm: LlmServer;
  let t: TestApp;
  let f: Fixture;
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${f.token}`);

  before(async () => {
    targets = await startInternalTargets();
    // the allowed engine listens on 127.0.0.2, the only allowlisted address
    llm = await startLlmServer({ apiKey: KEY, host: '127.0.0.2' });
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', ...targets.env } });
    f = await createFixture(t.ctx);
  });
  after(async () => {
    await t?.close();
    await llm?.close();
    await targets?.close();
  });
  afterEach(() => expect(targets.internalHits(), 'the internal server was reached').to.equal(0));

  const createAi = (engine_url: string) => auth(request(t.app).post('/v1.0/ais')).send({ name: 'bot', engine_model: 'openai.gpt-5', engine_url, engine_key: KEY, init_prompt: 'Be helpful.' });

  /** Asks for a prompt proposal (one LLM call through the engine) and returns the finished proposal. */
  const callEngine = (aiId: string) => proposalOutcome(t.app, f.token, aiId);

  it('the reported request (engine_url on loopback) is refused at create and at update with 400 naming engine_url', async () => {
    const r = await createAi(`http://127.0.0.1:${targets.port}/v1`);
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
    expect(r.body.error.message).to.equal("engine_url: the URL's host is a loopback address, which is not allowed");
    expect(r.body.error.details).to.deep.equal([{ field: 'engine_url', issue: "the URL's host is a loopback address, which is not allowed" }]);
    const ok = await createAi(llm.url);
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    const u = await auth(request(t.app).put(`/v1.0/ais/${ok.body.id}`)).send({ engine_url: `http://[::ffff:127.0.0.1]:${targets.port}/v1` });
    expect(u.status).to.equal(400);
    expect(u.body.error.details[0].field).to.equal('engine_url');
    const creds = await auth(request(t.app).put(`/v1.0/ais/${ok.body.id}`)).send({ engine_url: `http://u:p@127.0.0.2:${llm.url.split(':')[2]}` });
    expect(creds.status).to.equal(400);
    expect(creds.body.error.message).to.match(/user name or password/);
  });

  for (const s of SPELLINGS) {
    it(`${s.kind}: ${s.label}`, async () => {
      targets.resetRebind();
      const r = await createAi(s.url(targets));
      if (r.status === 400) {
        expect(s.kind, 'only literals are known at create time').to.equal('literal');
        expect(r.body.error.details[0].field).to.equal('engine_url');
        return;
      }
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const p = await callEngine(r.body.id);
      expect(p.status).to.equal('failed');
      expect(p.error).to.not.include(targets.secret);
      expect(p.error).to.not.match(/\d+\.\d+\.\d+\.\d+|::1|allowed server/);
      if (s.kind === 'name') expect(p.error).to.equal('LLM endpoint refused: the destination host name resolves to an address that is not allowed');
      // a redirect is not followed: the allowed server's 302 is the answer
      if (s.kind === 'redirect') expect(p.error).to.equal('LLM endpoint answered HTTP 302');
    });
  }

  it('an allowlisted engine is called with the key and answers', async () => {
    llm.options.respond = () => ({ text: '{"prompt":"Be brief.","rationale":"shorter"}' });
    const ai = await createAi(llm.url);
    expect(ai.status).to.equal(200);
    const p = await callEngine(ai.body.id);
    expect(p.status, p.error).to.equal('completed');
    expect(llm.authHeaders.at(-1)).to.equal(`Bearer ${KEY}`);
  });
});
