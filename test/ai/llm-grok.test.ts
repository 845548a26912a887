// grok.* through xAI's API (OpenAI-compatible chat completions; the stand-in testkit/vendors/xai.ts
// models what xAI does differently): ai_task on a real call (sipp) with XAI_BASE_URL / XAI_API_KEY as
// the platform defaults, a reasoning model's reasoning_content never in the answer, a function call
// sent whole in one chunk, no parameters xAI's reasoning models refuse, and a wrong key (xAI answers
// 400, not 401) said as a refused key.
import { expect } from 'chai';
import { truncateAll } from '../../testkit/db';
import { eventsFor, killAllSipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { startXai, type XaiStandIn } from '../../testkit/vendors/xai';
import { aiFlow, callAi, endedFlow } from '../../testkit/ai/flow-call';
import { resolveEndpoint } from '../../core/llm/endpoint';

const KEY = 'xai-test-key';

describe('LLM: grok.* through xAI’s API', function () {
  this.timeout(120_000);
  let p: Platform;
  let x: XaiStandIn;

  before(async () => {
    await truncateAll();
    x = await startXai({ apiKey: KEY });
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
  });
  after(async () => {
    killAllSipp();
    await p?.close();
    await x?.close();
  });
  afterEach(() => {
    delete process.env.XAI_BASE_URL;
    delete process.env.XAI_API_KEY;
  });

  it('ai_task with XAI_* defaults: the tool call (whole in one chunk) runs, the reasoning is not the answer', async () => {
    process.env.XAI_BASE_URL = x.url;
    process.env.XAI_API_KEY = KEY;
    x.options.respond = (req) =>
      req.messages.at(-1)?.role === 'tool'
        ? { reasoning: 'The intent is stored; confirm it.', text: 'Your cancellation is noted.' }
        : { reasoning: 'The caller wants to cancel.', tool_calls: [{ name: 'set_variables', arguments: { variables: { intent: 'cancel' } } }] };
    const { db, cid, number } = await aiFlow({ engine_model: 'grok.grok-3-mini', action: 'ai_task' });
    const r = await callAi(p, number);
    expect(r.code, r.errors + r.messages).to.equal(0);
    const { af, aicall } = await endedFlow(db, cid);
    expect(af.error).to.equal('');
    expect(af.variables).to.include({ intent: 'cancel', 'svc.ai_task.result': 'Your cancellation is noted.' });
    expect(x.requests).to.have.length(2);
    for (const q of x.requests) {
      expect(q).to.include({ model: 'grok-3-mini', stream: true });
      for (const k of ['presence_penalty', 'frequency_penalty', 'stop']) expect(q).to.not.have.property(k);
    }
    const tool = x.requests[1]!.messages.at(-1)!;
    expect(tool.role).to.equal('tool');
    expect(tool.tool_call_id).to.equal('call_1_0');
    const said = await db('aimessages').where({ aicall_id: aicall!.id, role: 'assistant' });
    expect(said.map((m: { content: string }) => m.content).join(' '))
      .to.not.include('Thinking')
      .and.not.include('intent is stored');
  });

  it('a wrong key (xAI answers HTTP 400 "Incorrect API key") ends the flow with a clear error; the key is not in it', async () => {
    const { db, cid, number } = await aiFlow({ engine_model: 'grok.grok-4', engine_url: x.url, engine_key: 'xai-wrong-0123456789', action: 'ai_task' });
    const r = await callAi(p, number);
    expect(r.code, r.errors + r.messages).to.equal(0);
    const { af } = await endedFlow(db, cid);
    expect(af.error).to.equal('ai_task: LLM endpoint answered HTTP 400: the API key was refused');
    const { aicall } = await endedFlow(db, cid);
    const e = await until(async () => (await eventsFor(p.redis, aicall!.id)).find((x) => x.event_type === 'aicall_llm_failed') ?? null, 10_000, 'aicall_llm_failed');
    expect(e.data).to.include({ engine_model: 'grok.grok-4', reason: 'LLM endpoint answered HTTP 400: the API key was refused' });
    expect(JSON.stringify(e.data)).to.not.include('xai-wrong');
  });

  it('a 429 from xAI is said as rate limited', async () => {
    x.options.respond = () => ({ status: 429 });
    const { db, cid, number } = await aiFlow({ engine_model: 'grok.grok-4', engine_url: x.url, engine_key: KEY, action: 'ai_task' });
    await callAi(p, number);
    const { af } = await endedFlow(db, cid);
    expect(af.error).to.equal('ai_task: LLM endpoint answered HTTP 429: rate limited');
  });

  it('the order of endpoints: engine_url, the vendor settings, AI_LLM_*; a platform key never goes to a customer URL', () => {
    const env = { XAI_API_KEY: 'xai-platform', OPENAI_API_KEY: 'sk-platform', AI_LLM_BASE_URL: 'http://llm.local/v1', AI_LLM_API_KEY: 'srv' } as NodeJS.ProcessEnv;
    expect(resolveEndpoint({ engine_model: 'grok.grok-4' }, env)).to.deep.include({ baseUrl: 'https://api.x.ai/v1', apiKey: 'xai-platform', model: 'grok-4', protocol: 'openai' });
    expect(resolveEndpoint({ engine_model: 'openai.gpt-5' }, env)).to.deep.include({ baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-platform' });
    // AI_LLM_BASE_URL is OpenAI-compatible: a gemini.* model reaches it in that protocol
    expect(resolveEndpoint({ engine_model: 'gemini.gemini-2.5-flash' }, env)).to.deep.include({ baseUrl: 'http://llm.local/v1', apiKey: 'srv', protocol: 'openai' });
    expect(resolveEndpoint({ engine_model: 'grok.grok-4', engine_url: 'https://evil.example/v1' }, env)).to.deep.include({ apiKey: '' });
    expect(resolveEndpoint({ engine_model: 'grok.grok-4', engine_url: 'https://api.x.ai/v1' }, env)).to.deep.include({ apiKey: 'xai-platform' });
    expect(resolveEndpoint({ engine_model: 'local.llama3' }, env)).to.deep.include({ baseUrl: 'http://llm.local/v1', apiKey: 'srv', model: 'llama3' });
    expect(resolveEndpoint({ engine_model: 'gemini.g' }, { AI_LLM_API_KEY: 'k' })).to.deep.include({ baseUrl: 'https://generativelanguage.googleapis.com', protocol: 'gemini' });
  });
});
