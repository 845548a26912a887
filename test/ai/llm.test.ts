// The LLM provider interface against the local OpenAI-compatible server: streamed text, tool calls
// split across deltas, embeddings, HTTP errors, endpoint resolution and key masking.
import { expect } from 'chai';
import { LlmClient, LlmError } from '../../core/llm/client';
import { maskKey, resolveEndpoint } from '../../core/llm/endpoint';
import { startLlmServer, type LlmServer } from '../../testkit/llm-server';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';

// the test server is on loopback: opened explicitly
const egress = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));

describe('ai: LLM provider interface', () => {
  let llm: LlmServer;
  before(async () => {
    llm = await startLlmServer({ apiKey: 'k-123456789' });
  });
  after(() => llm.close());

  const client = (key = 'k-123456789') => new LlmClient({ baseUrl: llm.url, model: 'm', apiKey: key }, egress);

  it('streams text pieces, then the tool calls reassembled from their deltas', async () => {
    llm.options.respond = () => ({ text: 'One. Two three.', tool_calls: [{ name: 'set_variables', arguments: { variables: { a: 'b' } } }] });
    const chunks = [];
    for await (const c of client().stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] })) chunks.push(c);
    const text = chunks.filter((c) => c.type === 'text');
    expect(text.length).to.be.greaterThan(1);
    expect(text.map((c) => (c as { text: string }).text).join('')).to.equal('One. Two three.');
    const calls = chunks.find((c) => c.type === 'tool_calls') as { calls: { id: string; function: { name: string; arguments: string } }[] };
    expect(calls.calls).to.have.length(1);
    expect(calls.calls[0]!.function.name).to.equal('set_variables');
    expect(JSON.parse(calls.calls[0]!.function.arguments)).to.deep.equal({ variables: { a: 'b' } });
    expect(chunks.at(-1)).to.deep.equal({ type: 'done', finish_reason: 'tool_calls' });
    expect(llm.requests.at(-1)!.stream).to.equal(true);
    expect(llm.requests.at(-1)!.model).to.equal('m');
  });

  it('embeds texts in order', async () => {
    const v = await client().embed(['alpha beta', 'gamma delta']);
    expect(v).to.have.length(2);
    expect(v[0]).to.have.length(64);
  });

  it('reports a refused key and an unreachable endpoint as LlmError', async () => {
    const e1 = await client('wrong')
      .complete({ messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(e1).to.be.instanceOf(LlmError);
    expect((e1 as LlmError).status).to.equal(401);
    const e2 = await new LlmClient({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', apiKey: '' }, egress).complete({ messages: [] }).catch((e: unknown) => e);
    expect((e2 as LlmError).code).to.equal('NETWORK');
  });

  it('resolves the endpoint per AI, then from the server, and refuses clearly when there is none', () => {
    expect(resolveEndpoint({ engine_model: 'openai.gpt-5', engine_url: 'http://x/v1', engine_key: 'k' }, {})).to.deep.include({ baseUrl: 'http://x/v1', model: 'gpt-5', apiKey: 'k' });
    expect(resolveEndpoint({ engine_model: 'openai.gpt-5', engine_key: 'k' }, {}).baseUrl).to.equal('https://api.openai.com/v1');
    expect(resolveEndpoint({}, { AI_LLM_BASE_URL: 'http://y/v1', AI_LLM_MODEL: 'local.llama3' })).to.deep.include({ baseUrl: 'http://y/v1', model: 'llama3' });
    expect(() => resolveEndpoint({ engine_model: 'openai.gpt-5' }, {})).to.throw(LlmError, /no LLM endpoint is configured/);
    expect(maskKey('sk-abcdefghijklmnop1234')).to.equal('sk-****************1234');
    expect(maskKey('short')).to.equal('*****');
    expect(maskKey('')).to.equal('');
  });
});
