// gemini.<model> through Gemini's own API (streamGenerateContent SSE, x-goog-api-key, contents/parts,
// systemInstruction, functionDeclarations, functionCall/functionResponse) on real calls (sipp), with
// the Gemini stand-in (testkit/vendors/gemini.ts): tool calls in ai_talk, GEMINI_* as platform
// defaults, a wrong key, the egress policy, and a summary.
import { expect } from 'chai';
import { truncateAll } from '../../testkit/db';
import { eventsFor, killAllSipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { startGemini, type GeminiRequest, type GeminiStandIn } from '../../testkit/vendors/gemini';
import { aiFlow, callAi, endedFlow } from '../../testkit/ai/flow-call';
import { toGemini } from '../../core/llm/gemini';
import { llmFor } from '../../core/llm/endpoint';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';

const KEY = 'gemini-test-key';
const fnResponses = (r: GeminiRequest) => r.contents.flatMap((c) => c.parts.filter((p) => p.functionResponse).map((p) => p.functionResponse!));

describe('LLM: gemini.* through Gemini’s own API', function () {
  this.timeout(120_000);
  let p: Platform;
  let g: GeminiStandIn;

  before(async () => {
    await truncateAll();
    g = await startGemini({ apiKey: KEY });
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }); // the stand-in is on loopback
  });
  after(async () => {
    killAllSipp();
    await p?.close();
    await g?.close();
  });
  afterEach(() => {
    delete process.env.GEMINI_BASE_URL;
    delete process.env.GEMINI_API_KEY;
    g.options.firstChunkDelayMs = 0;
  });

  it('ai_talk: Gemini calls set_variables, then stop_flow; the functionResponses go back by name and the call ends', async () => {
    g.options.respond = (req) => {
      const done = fnResponses(req).map((f) => f.name);
      if (!done.includes('set_variables'))
        return { text: 'One moment please, I am writing down your order for a large pizza.', function_calls: [{ name: 'set_variables', args: { variables: { intent: 'order', size: 'large' } } }] };
      if (!done.includes('stop_flow')) return { function_calls: [{ name: 'stop_flow', args: {} }] };
      return { text: '' };
    };
    const { db, cid, number } = await aiFlow({
      engine_model: 'gemini.gemini-2.5-flash',
      engine_url: g.url,
      engine_key: KEY,
      after: [{ type: 'talk', option: { text: 'never said' } }, { type: 'hangup' }],
    });
    const r = await callAi(p, number);
    expect(r.code, r.errors + r.messages).to.equal(0);
    // Gemini's words were spoken into the call (about 3 s of speech)
    expect(r.voiced, 'voiced packets heard by the caller').to.be.greaterThan(60);
    const { af, aicall } = await endedFlow(db, cid);
    expect(af.error).to.equal('');
    expect(af.variables).to.include({ intent: 'order', size: 'large' });
    expect(af.executed_actions.map((a) => a.type)).to.not.include('talk');
    // the wire: Gemini's shapes, not the OpenAI shim
    const first = g.requests.find((q) => q.contents.length === 1)!;
    expect(first).to.include({ model: 'gemini-2.5-flash', stream: true, apiKey: KEY });
    expect(first.systemInstruction!.parts[0]!.text).to.include('You take orders for the shop.');
    const decl = first.tools![0]!.functionDeclarations!.map((d) => d.name);
    expect(decl).to.include.members(['set_variables', 'stop_flow', 'connect_call']);
    const second = g.requests.find((q) => fnResponses(q).some((f) => f.name === 'set_variables'))!;
    const model = second.contents.find((c) => c.role === 'model')!;
    expect(model.parts.find((x) => x.functionCall)!.functionCall).to.deep.include({ name: 'set_variables', args: { variables: { intent: 'order', size: 'large' } } });
    // messages: the assistant's call, the tool's result
    const msgs = (await db('aimessages').where({ aicall_id: aicall!.id }).orderBy('tm_create')) as { role: string; tool_calls: { function: { name: string } }[] }[];
    const calls = msgs.filter((m) => m.role === 'assistant').flatMap((m) => m.tool_calls.map((c) => c.function.name));
    expect(calls).to.deep.equal(['set_variables', 'stop_flow']);
    expect(aicall!.status).to.equal('terminated');
  });

  it('ai_task with GEMINI_BASE_URL / GEMINI_API_KEY as the platform defaults (no engine_url); thoughts are not the answer', async () => {
    process.env.GEMINI_BASE_URL = g.url;
    process.env.GEMINI_API_KEY = KEY;
    g.options.respond = () => ({ thought: 'The caller wants a pizza.', text: 'A large pizza is on its way.' });
    const { db, cid, number } = await aiFlow({ engine_model: 'gemini.gemini-2.5-pro', action: 'ai_task' });
    const r = await callAi(p, number);
    expect(r.code, r.errors + r.messages).to.equal(0);
    const { af } = await endedFlow(db, cid);
    expect(af.error).to.equal('');
    expect(af.variables['svc.ai_task.result']).to.equal('A large pizza is on its way.');
    expect(g.requests.at(-1)).to.include({ model: 'gemini-2.5-pro', apiKey: KEY });
  });

  it('a wrong key ends the flow with a clear error (Gemini answers 400 API_KEY_INVALID); the key is not in it', async () => {
    const { db, cid, number } = await aiFlow({ engine_model: 'gemini.gemini-2.5-flash', engine_url: g.url, engine_key: 'AIza-wrong-key-123456' });
    const before = g.requests.length;
    const r = await callAi(p, number);
    expect(r.code, r.errors + r.messages).to.equal(0);
    const { af } = await endedFlow(db, cid);
    expect(af.error).to.equal('ai_talk: Gemini API answered HTTP 400 INVALID_ARGUMENT: the API key was refused');
    expect(af.error).to.not.include('wrong-key');
    expect(g.requests.length, 'refused before the model ran').to.equal(before);
    // and the event says the same
    const { aicall } = await endedFlow(db, cid);
    const e = await until(async () => (await eventsFor(p.redis, aicall!.id)).find((x) => x.event_type === 'aicall_llm_failed') ?? null, 10_000, 'aicall_llm_failed');
    expect(e.data).to.include({ engine_model: 'gemini.gemini-2.5-flash', reason: 'Gemini API answered HTTP 400 INVALID_ARGUMENT: the API key was refused' });
    expect(JSON.stringify(e.data)).to.not.include('wrong-key');
  });

  it('the egress policy refuses an engine_url on a private address: a clear flow error, nothing sent', async () => {
    const { db, cid, number } = await aiFlow({ engine_model: 'gemini.gemini-2.5-flash', engine_url: 'http://10.255.0.1:8443', engine_key: KEY, action: 'ai_task' });
    const r = await callAi(p, number);
    expect(r.code, r.errors + r.messages).to.equal(0);
    const { af } = await endedFlow(db, cid);
    expect(af.error).to.match(/^ai_task: LLM endpoint refused: .*private address/);
  });

  it('without a key (no engine_key, no GEMINI_API_KEY) ai_talk says so before anything is written', async () => {
    const { db, cid, number } = await aiFlow({ engine_model: 'gemini.gemini-2.5-flash', engine_url: g.url });
    const r = await callAi(p, number);
    expect(r.code, r.errors + r.messages).to.equal(0);
    const { af, aicall } = await endedFlow(db, cid);
    expect(af.error).to.include('gemini.* needs an API key');
    expect(aicall).to.equal(undefined);
  });

  it('summaries and other whole completions: AI_LLM_MODEL gemini.* with GEMINI_API_KEY goes to Gemini; 429 is said as rate limited', async () => {
    const env = { AI_LLM_MODEL: 'gemini.gemini-2.5-flash', GEMINI_BASE_URL: g.url, GEMINI_API_KEY: KEY, EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } as NodeJS.ProcessEnv;
    const egress = new EgressPolicy(egressSettingsFromEnv(env));
    g.options.respond = () => ({ text: 'The caller ordered a pizza.' });
    const out = await llmFor({}, env, egress).complete({
      messages: [
        { role: 'system', content: 'Summarise.' },
        { role: 'user', content: 'Caller: a pizza please' },
      ],
    });
    expect(out.content).to.equal('The caller ordered a pizza.');
    expect(g.requests.at(-1)!.systemInstruction!.parts[0]!.text).to.equal('Summarise.');
    g.options.respond = () => ({ status: 429 });
    const err = await llmFor({}, env, egress)
      .complete({ messages: [{ role: 'user', content: 'x' }] })
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(err?.message).to.equal('Gemini API answered HTTP 429 RESOURCE_EXHAUSTED: rate limited');
  });

  it('the mapping: an opening with no conversation sends its instruction as the user turn; tool results of a round travel together', () => {
    const open = toGemini([
      { role: 'system', content: 'Prompt.' },
      { role: 'system', content: 'Greet them.' },
    ]);
    expect(open).to.deep.equal({ systemInstruction: 'Prompt.', contents: [{ role: 'user', parts: [{ text: 'Greet them.' }] }] });
    const round = toGemini([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'gemini-local-0', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
          { id: 'c2', type: 'function', function: { name: 'b', arguments: '' } },
        ],
      },
      { role: 'tool', content: 'ok', tool_call_id: 'gemini-local-0' },
      { role: 'tool', content: 'fine', tool_call_id: 'c2' },
    ]);
    expect(round.contents[2]).to.deep.equal({
      role: 'user',
      parts: [{ functionResponse: { name: 'a', response: { result: 'ok' } } }, { functionResponse: { id: 'c2', name: 'b', response: { result: 'fine' } } }],
    });
  });

  it('events: an aicall of a Gemini AI publishes its messages', async () => {
    g.options.respond = (req) => (fnResponses(req).length ? { text: '' } : { text: 'Goodbye.', function_calls: [{ name: 'stop_flow', args: {} }] });
    const { db, cid, number } = await aiFlow({ engine_model: 'gemini.gemini-2.5-flash', engine_url: g.url, engine_key: KEY });
    await callAi(p, number);
    const { aicall } = await endedFlow(db, cid);
    const types = await until(
      async () => {
        const t = (await eventsFor(p.redis, aicall!.id)).map((e) => e.event_type);
        return t.includes('aicall_status_terminated') ? t : null;
      },
      10_000,
      'aicall events',
    );
    expect(types).to.include('aimessage_created');
  });
});
