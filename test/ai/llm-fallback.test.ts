// LLM fallback by choice (parameter.llm_fallback, parameter.llm_first_token_ms): on real calls (sipp)
// with the Gemini and xAI stand-ins, a failing first model (5xx) and a slow one (first token after
// the deadline) hand over to the fallback with an aicall_llm_fallback event; without a fallback a
// failure is the flow's error. Over the API: the settings are checked like engine_model / engine_url
// (400 in the error envelope) and the fallback's key is never returned whole.
import { expect } from 'chai';
import request from 'supertest';
import { truncateAll } from '../../testkit/db';
import { eventsFor, killAllSipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { startGemini, type GeminiStandIn } from '../../testkit/vendors/gemini';
import { startXai, type XaiStandIn } from '../../testkit/vendors/xai';
import { aiFlow, callAi, endedFlow } from '../../testkit/ai/flow-call';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { aisRepo } from '../../core/repos/ais';
import { openKey } from '../../core/secrets/keys';

const GKEY = 'gemini-test-key';
const XKEY = 'xai-test-key-0123456789';

describe('LLM fallback by choice', function () {
  this.timeout(120_000);

  describe('on a call', () => {
    let p: Platform;
    let g: GeminiStandIn;
    let x: XaiStandIn;

    before(async () => {
      await truncateAll();
      g = await startGemini({ apiKey: GKEY });
      x = await startXai({ apiKey: XKEY });
      p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    });
    after(async () => {
      killAllSipp();
      await p?.close();
      await g?.close();
      await x?.close();
    });
    afterEach(() => {
      g.options.firstChunkDelayMs = 0;
      g.options.respond = undefined;
    });

    const fallbackEvent = async (aicallId: string) =>
      until(async () => (await eventsFor(p.redis, aicallId)).find((e) => e.event_type === 'aicall_llm_fallback') ?? null, 10_000, 'aicall_llm_fallback');

    it('Gemini answers 503: Grok (the fallback) answers, with an aicall_llm_fallback event', async () => {
      g.options.respond = () => ({ status: 503 });
      x.options.respond = (req) =>
        req.messages.at(-1)?.role === 'tool' ? { text: 'Answered by the fallback.' } : { tool_calls: [{ name: 'set_variables', arguments: { variables: { by: 'grok' } } }] };
      const geminiBefore = g.requests.length;
      const { db, cid, number } = await aiFlow({
        engine_model: 'gemini.gemini-2.5-flash',
        engine_url: g.url,
        engine_key: GKEY,
        action: 'ai_task',
        parameter: { llm_fallback: { engine_model: 'grok.grok-4', engine_url: x.url, engine_key: XKEY } },
      });
      const r = await callAi(p, number);
      expect(r.code, r.errors + r.messages).to.equal(0);
      const { af, aicall } = await endedFlow(db, cid);
      expect(af.error).to.equal('');
      expect(af.variables).to.include({ by: 'grok', 'svc.ai_task.result': 'Answered by the fallback.' });
      // after the tool round the conversation stays on the fallback: Gemini was asked once
      expect(g.requests.length - geminiBefore).to.equal(1);
      const e = await fallbackEvent(aicall!.id);
      expect(e.data).to.include({ aicall_id: aicall!.id, engine_model: 'gemini.gemini-2.5-flash', fallback_engine_model: 'grok.grok-4', reason: 'error' });
      expect(e.data.message).to.equal('Gemini API answered HTTP 503 UNAVAILABLE');
      expect(JSON.stringify(e.data)).to.not.include(XKEY);
    });

    it('ai_talk: a first token slower than llm_first_token_ms switches to the fallback, whose tool call (stop_flow) runs', async () => {
      g.options.firstChunkDelayMs = 3000;
      g.options.respond = () => ({ text: 'Too late to be heard.' });
      x.options.respond = (req) => (req.messages.at(-1)?.role === 'tool' ? { text: '' } : { text: 'Goodbye.', tool_calls: [{ name: 'stop_flow', arguments: {} }] });
      const { db, cid, number } = await aiFlow({
        engine_model: 'gemini.gemini-2.5-flash',
        engine_url: g.url,
        engine_key: GKEY,
        parameter: { llm_fallback: { engine_model: 'grok.grok-4', engine_url: x.url, engine_key: XKEY }, llm_first_token_ms: 400 },
        after: [{ type: 'talk', option: { text: 'never said' } }, { type: 'hangup' }],
      });
      const started = Date.now();
      const geminiBefore = g.requests.length;
      const grokBefore = x.requests.length;
      const r = await callAi(p, number);
      expect(r.code, r.errors + r.messages).to.equal(0);
      const { af, aicall } = await endedFlow(db, cid);
      expect(af.error).to.equal('');
      expect(af.executed_actions.map((a) => a.type)).to.not.include('talk');
      expect(Date.now() - started).to.be.lessThan(30_000);
      const e = await fallbackEvent(aicall!.id);
      expect(e.data).to.include({ reason: 'slow', fallback_engine_model: 'grok.grok-4' });
      expect(e.data.message).to.equal('no first token within 400 ms');
      const said = await db('aimessages').where({ aicall_id: aicall!.id, role: 'assistant' });
      expect(said.map((m: { content: string }) => m.content).join(' ')).to.not.include('Too late');
      // the rest of the conversation stays on the fallback
      expect(g.requests.length - geminiBefore, 'Gemini asked once').to.equal(1);
      // stop_flow ends the conversation: no round after the tool
      expect(x.requests.length - grokBefore, 'Grok answered the opening').to.equal(1);
    });

    it('without llm_fallback a failure is the flow’s error, nothing else answers', async () => {
      g.options.respond = () => ({ status: 500 });
      const before = x.requests.length;
      const { db, cid, number } = await aiFlow({ engine_model: 'gemini.gemini-2.5-flash', engine_url: g.url, engine_key: GKEY, action: 'ai_task' });
      await callAi(p, number);
      const { af } = await endedFlow(db, cid);
      expect(af.error).to.equal('ai_task: Gemini API answered HTTP 500 INTERNAL');
      expect(x.requests.length).to.equal(before);
    });

    it('a fallback that fails too: the flow ends with the fallback’s error', async () => {
      g.options.respond = () => ({ status: 429 });
      const { db, cid, number } = await aiFlow({
        engine_model: 'gemini.gemini-2.5-flash',
        engine_url: g.url,
        engine_key: GKEY,
        action: 'ai_task',
        parameter: { llm_fallback: { engine_model: 'grok.grok-4', engine_url: x.url, engine_key: 'xai-wrong-key-000000' } },
      });
      await callAi(p, number);
      const { af } = await endedFlow(db, cid);
      expect(af.error).to.equal('ai_task: LLM endpoint answered HTTP 400: the API key was refused');
    });
  });

  describe('over the API', () => {
    let t: TestApp;
    let f: Fixture;
    const auth = (r: request.Test) => r.set('Authorization', `Bearer ${f.token}`);
    before(async () => {
      t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } });
      f = await createFixture(t.ctx);
    });
    after(async () => {
      await t?.close();
    });
    const create = (parameter: Record<string, unknown>) => auth(request(t.app).post('/v1.0/ais')).send({ name: 'fb', engine_model: 'gemini.gemini-2.5-flash', parameter });

    it('bad settings are 400 INVALID_ARGUMENT naming the field; nothing is stored', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ llm_fallback: 'mistral.large' }, 'parameter.llm_fallback.engine_model'],
        [{ llm_fallback: 'gpt-5' }, 'parameter.llm_fallback.engine_model'],
        [{ llm_fallback: 'openai-realtime.gpt-realtime' }, 'parameter.llm_fallback.engine_model'],
        [{ llm_fallback: 7 }, 'parameter.llm_fallback'],
        [{ llm_fallback: { engine_model: 'grok.grok-4', engine_key: 5 } }, 'parameter.llm_fallback.engine_key'],
        [{ llm_fallback: { engine_model: 'grok.grok-4', engine_url: 'http://10.0.0.5/v1' } }, 'parameter.llm_fallback.engine_url'],
        [{ llm_fallback: { engine_model: 'grok.grok-4', engine_url: 'ftp://x.example/' } }, 'parameter.llm_fallback.engine_url'],
        [{ llm_fallback: 'grok.grok-4', llm_first_token_ms: 50 }, 'parameter.llm_first_token_ms'],
        [{ llm_fallback: 'grok.grok-4', llm_first_token_ms: 'fast' }, 'parameter.llm_first_token_ms'],
        [{ llm_first_token_ms: 800 }, 'parameter.llm_first_token_ms'],
      ];
      const before = (await aisRepo(t.ctx.db).list(f.customer.id, { pageSize: 100 } as never)).result.length;
      for (const [parameter, field] of cases) {
        const r = await create(parameter);
        expect(r.status, JSON.stringify([parameter, r.body])).to.equal(400);
        expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
        expect(r.body.error.details[0].field, JSON.stringify(parameter)).to.equal(field);
      }
      expect((await aisRepo(t.ctx.db).list(f.customer.id, { pageSize: 100 } as never)).result.length).to.equal(before);
    });

    it('a text aicall (POST /aicalls, /aimessages): Gemini fails with 500, Grok answers, with the event', async () => {
      const g = await startGemini({ apiKey: GKEY, respond: () => ({ status: 500 }) });
      const x = await startXai({ apiKey: XKEY, respond: () => ({ text: 'Grok here.' }) });
      try {
        const ai = await auth(request(t.app).post('/v1.0/ais'))
          .send({
            name: 'text',
            engine_model: 'gemini.gemini-2.5-flash',
            engine_url: g.url,
            engine_key: GKEY,
            parameter: { llm_fallback: { engine_model: 'grok.grok-4', engine_url: x.url, engine_key: XKEY } },
          })
          .expect(200);
        const call = await auth(request(t.app).post('/v1.0/aicalls')).send({ assistance_type: 'ai', assistance_id: ai.body.id, reference_type: 'task' }).expect(200);
        // the aicall's copy of the parameter shows the fallback's key masked too
        expect(call.body.parameter.llm_fallback.engine_key).to.equal('xai****************6789');
        expect(JSON.stringify(call.body)).to.not.include(XKEY);
        await auth(request(t.app).post('/v1.0/aimessages')).send({ aicall_id: call.body.id, role: 'user', content: 'Hello?' }).expect(200);
        const said = await until(async () => (await t.ctx.db('aimessages').where({ aicall_id: call.body.id, role: 'assistant' }))[0] as { content: string } | undefined, 10_000, 'the answer');
        expect(said.content).to.equal('Grok here.');
        expect(g.requests).to.have.length(1);
        const e = await until(async () => (await eventsFor(t.ctx.redis, call.body.id)).find((x) => x.event_type === 'aicall_llm_fallback') ?? null, 10_000, 'event');
        expect(e.data).to.include({ reason: 'error', engine_model: 'gemini.gemini-2.5-flash', fallback_engine_model: 'grok.grok-4', message: 'Gemini API answered HTTP 500 INTERNAL' });
      } finally {
        await g.close();
        await x.close();
      }
    });

    it('the fallback key is shown masked, and a masked key written back keeps the stored one', async () => {
      const key = 'xai-secret-key-abcdef123456';
      const r = await create({ llm_fallback: { engine_model: 'grok.grok-4', engine_key: key }, llm_first_token_ms: 800 });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(JSON.stringify(r.body)).to.not.include(key);
      expect(r.body.parameter.llm_fallback).to.deep.equal({ engine_model: 'grok.grok-4', engine_key: 'xai********************3456' });
      const put = await auth(request(t.app).put(`/v1.0/ais/${r.body.id}`)).send({ parameter: r.body.parameter });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      const stored = await aisRepo(t.ctx.db).get(f.customer.id, r.body.id);
      expect(openKey((stored!.parameter.llm_fallback as { engine_key: string }).engine_key)).to.equal(key);
    });
  });
});
