/**
 * Review: the server-wide LLM key (AI_LLM_API_KEY) must never be sent to a customer's engine_url.
 * An AI created with an engine_url of the customer's choice and no engine_key used to be called with
 * `Authorization: Bearer <AI_LLM_API_KEY>`: any sign-up could collect the operator's key on a server
 * of its own. Real API, a real OpenAI-compatible server on 127.0.0.2 (the only allowlisted address).
 */
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { startLlmServer, type LlmServer } from '../../testkit/llm-server';
import { proposalOutcome } from './proposals';

const SERVER_KEY = 'sk-operator-0123456789abcdef';

describe('security review: the operator LLM key stays with the operator endpoint', function () {
  this.timeout(60_000);
  let customerLlm: LlmServer;
  let operatorLlm: LlmServer;
  let t: TestApp;
  let f: Fixture;
  const saved = { key: process.env.AI_LLM_API_KEY, url: process.env.AI_LLM_BASE_URL };
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${f.token}`);

  before(async () => {
    customerLlm = await startLlmServer({ host: '127.0.0.2' });
    operatorLlm = await startLlmServer({ host: '127.0.0.2', apiKey: SERVER_KEY });
    customerLlm.options.respond = operatorLlm.options.respond = () => ({ text: '{"prompt":"Be brief.","rationale":"shorter"}' });
    process.env.AI_LLM_API_KEY = SERVER_KEY;
    process.env.AI_LLM_BASE_URL = operatorLlm.url;
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', EGRESS_ALLOW_CIDRS: '127.0.0.2/32' } });
    f = await createFixture(t.ctx);
  });
  after(async () => {
    if (saved.key === undefined) delete process.env.AI_LLM_API_KEY;
    else process.env.AI_LLM_API_KEY = saved.key;
    if (saved.url === undefined) delete process.env.AI_LLM_BASE_URL;
    else process.env.AI_LLM_BASE_URL = saved.url;
    await t?.close();
    await customerLlm?.close();
    await operatorLlm?.close();
  });

  async function propose(body: Record<string, unknown>): Promise<{ status: string; error: string }> {
    const ai = await auth(request(t.app).post('/v1.0/ais')).send({ name: 'bot', engine_model: 'openai.gpt-5', init_prompt: 'Be helpful.', ...body });
    expect(ai.status, JSON.stringify(ai.body)).to.equal(200);
    return proposalOutcome(t.app, f.token, ai.body.id);
  }

  it('an AI with its own engine_url and no engine_key is called without the server key', async () => {
    await propose({ engine_url: customerLlm.url });
    expect(customerLlm.authHeaders.length, 'the customer engine was called').to.be.greaterThan(0);
    expect(customerLlm.authHeaders.join('\n')).to.not.include(SERVER_KEY);
  });

  it('an AI with no engine_url still uses the server-wide endpoint with its key', async () => {
    const p = await propose({});
    expect(p.status, p.error).to.equal('completed');
    expect(operatorLlm.authHeaders.at(-1)).to.equal(`Bearer ${SERVER_KEY}`);
  });

  it("an AI whose engine_url is the server's own AI_LLM_BASE_URL keeps the server key", async () => {
    const p = await propose({ engine_url: operatorLlm.url });
    expect(p.status, p.error).to.equal('completed');
    expect(operatorLlm.authHeaders.at(-1)).to.equal(`Bearer ${SERVER_KEY}`);
  });
});
