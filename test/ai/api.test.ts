// The AI resources over HTTP against the real test Postgres/Redis and a local OpenAI-compatible
// server: AIs (masked key, prompt histories), proposals, teams, text AI sessions with RAG context,
// RAG ingestion of a storage file and of a URL served on loopback, summaries, and bad input.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { lastUser, startLlmServer, type LlmServer } from '../../testkit/llm-server';
import { until } from '../../testkit/media-app/harness';
import { retrieve } from '../../core/rag/search';
import { openKey, openParameter } from '../../core/secrets/keys';
import { AI_FIELDS } from '../../control-api/routes/ais';

describe('ai: resources over the API', function () {
  this.timeout(60_000);
  let t: TestApp;
  let f: Fixture;
  let llm: LlmServer;
  let web: http.Server;
  let webUrl = '';
  const api = () => request(t.app);
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${f.token}`);

  before(async () => {
    // the LLM and web servers are on loopback: opened explicitly
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } });
    f = await createFixture(t.ctx);
    llm = await startLlmServer({ apiKey: 'sk-test-0123456789abcdef' });
    web = http.createServer((req, res) => {
      if (req.url === '/faq.html') {
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<html><head><script>var x = 1;</script></head><body><h1>Parking</h1><p>Visitors park for free in the blue garage behind building seven.</p></body></html>');
      } else res.writeHead(404).end('nope');
    });
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  });
  after(async () => {
    await llm?.close();
    web?.close();
    await t?.close();
  });

  async function createAi(extra: Record<string, unknown> = {}) {
    const r = await auth(api().post('/v1.0/ais')).send({
      name: 'support bot',
      init_prompt: 'You are the support desk of ${company}.',
      engine_model: 'openai.gpt-5',
      engine_url: llm.url,
      engine_key: 'sk-test-0123456789abcdef',
      parameter: { company: 'Acme' },
      ...extra,
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body;
  }

  it('creates an AI with the key masked, a prompt history per init_prompt change, and a new direct hash on demand', async () => {
    const ai = await createAi({ tool_names: ['all'] });
    expect(ai.engine_key).to.not.equal('sk-test-0123456789abcdef');
    expect(ai.engine_key).to.match(/^sk-\*+cdef$/);
    expect(ai.direct_hash).to.have.length(24);
    const got = await auth(api().get(`/v1.0/ais/${ai.id}`));
    expect(JSON.stringify(got.body)).to.not.include('0123456789');
    expect(Object.keys(got.body), "the document's AI fields are the JSON's, in its order").to.deep.equal(AI_FIELDS);
    await auth(api().put(`/v1.0/ais/${ai.id}`))
      .send({ detail: 'no prompt change' })
      .expect(200);
    const upd = await auth(api().put(`/v1.0/ais/${ai.id}`))
      .send({ init_prompt: 'Be brief.' })
      .expect(200);
    const h = await auth(api().get(`/v1.0/ais/${ai.id}/prompt_histories`)).expect(200);
    expect(h.body.result.map((x: { prompt: string }) => x.prompt)).to.deep.equal(['Be brief.', 'You are the support desk of ${company}.']);
    expect(h.body.result[0].proposal_id).to.equal('00000000-0000-0000-0000-000000000000');
    expect(upd.body.current_prompt_history_id).to.equal(h.body.result[0].id);
    const one = await auth(api().get(`/v1.0/ais/${ai.id}/prompt_histories/${h.body.result[1].id}`)).expect(200);
    expect(one.body.prompt).to.equal('You are the support desk of ${company}.');
    const re = await auth(api().post(`/v1.0/ais/${ai.id}/direct_hash_regenerate`)).expect(200);
    expect(re.body.direct_hash).to.not.equal(ai.direct_hash);
    // read-only history: no POST route
    expect((await auth(api().post(`/v1.0/ais/${ai.id}/prompt_histories`)).send({ prompt: 'x' })).status).to.be.oneOf([404, 405]);
  });

  it('an AI read and written back as shown keeps its keys: a masked key in a PUT is not stored', async () => {
    const ai = await createAi({ parameter: { company: 'Acme', tts_key: 'el-key-0123456789abcdef', tts_fallback: { tts_type: 'cartesia', tts_key: 'ca-key-0123456789abcdef' } } });
    const shown = (await auth(api().get(`/v1.0/ais/${ai.id}`)).expect(200)).body;
    expect(JSON.stringify(shown)).to.not.include('0123456789');
    // a client that edits one field and sends the rest back as it read it
    await auth(api().put(`/v1.0/ais/${ai.id}`))
      .send({ engine_key: shown.engine_key, parameter: { ...shown.parameter, company: 'Acme Corp' } })
      .expect(200);
    const row = (await t.ctx.db('ais').where({ id: ai.id }).first())!;
    // stored sealed (docs/ai.md "Keys"): opened here to compare
    expect(openKey(row.engine_key)).to.equal('sk-test-0123456789abcdef');
    expect(openParameter(row.parameter)).to.deep.include({ company: 'Acme Corp', tts_key: 'el-key-0123456789abcdef' });
    expect(openParameter(row.parameter).tts_fallback).to.deep.equal({ tts_type: 'cartesia', tts_key: 'ca-key-0123456789abcdef' });
    // a new key is a new key
    await auth(api().put(`/v1.0/ais/${ai.id}`))
      .send({ engine_key: 'sk-new-9876543210fedcba', parameter: { tts_key: 'el-new-9876543210fedcba' } })
      .expect(200);
    const row2 = (await t.ctx.db('ais').where({ id: ai.id }).first())!;
    expect(openKey(row2.engine_key)).to.equal('sk-new-9876543210fedcba');
    expect(openParameter(row2.parameter)).to.deep.equal({ tts_key: 'el-new-9876543210fedcba' });
  });

  it('refuses bad AI input in the error envelope', async () => {
    const noName = await auth(api().post('/v1.0/ais')).send({ init_prompt: 'x' });
    expect(noName.status).to.equal(400);
    expect(noName.body.error.reason).to.equal('INVALID_ARGUMENT');
    expect(noName.body.error.details[0]).to.deep.include({ field: 'name', issue: 'required' });
    const badTool = await auth(api().post('/v1.0/ais')).send({ name: 'x', tool_names: ['rm_rf'] });
    expect(badTool.status).to.equal(400);
    const badRag = await auth(api().post('/v1.0/ais')).send({ name: 'x', rag_id: '6f1c8a5e-1111-4222-8333-944444444444' });
    expect(badRag.status).to.equal(400);
    expect(badRag.body.error.message).to.include('rag_id');
    expect((await auth(api().get('/v1.0/ais/6f1c8a5e-1111-4222-8333-944444444444'))).body.error.reason).to.equal('AI_NOT_FOUND');
  });

  it("a prompt proposal is generated through the AI's engine and accepting it writes a history entry naming it", async () => {
    llm.options.respond = (req) => (req.messages[0]!.content?.includes('improve system prompts') ? { text: '{"prompt":"You are Acme support. Be concise.","rationale":"shorter"}' } : { text: 'ok' });
    const ai = await createAi();
    const p = await auth(api().post('/v1.0/aipromptproposals')).send({ ai_id: ai.id }).expect(202);
    expect(p.body.status).to.equal('progressing');
    const done = await until(
      async () => {
        const r = await auth(api().get(`/v1.0/aipromptproposals/${p.body.id}`));
        return r.body.status !== 'progressing' ? r.body : null;
      },
      10_000,
      'proposal completed',
    );
    expect(done.status, done.error).to.equal('completed');
    expect(done.proposed_prompt).to.equal('You are Acme support. Be concise.');
    expect(llm.authHeaders.at(-1)).to.equal('Bearer sk-test-0123456789abcdef');
    const acc = await auth(api().post(`/v1.0/aipromptproposals/${p.body.id}/accept`)).expect(200);
    expect(acc.body.status).to.equal('accepted');
    const ai2 = (await auth(api().get(`/v1.0/ais/${ai.id}`))).body;
    expect(ai2.init_prompt).to.equal('You are Acme support. Be concise.');
    const h = (await auth(api().get(`/v1.0/ais/${ai.id}/prompt_histories`))).body.result[0];
    expect(h.proposal_id).to.equal(p.body.id);
    expect(acc.body.applied_prompt_history_id).to.equal(h.id);
    // accepting twice is a state error
    expect((await auth(api().post(`/v1.0/aipromptproposals/${p.body.id}/accept`))).status).to.equal(409);
    llm.options.respond = undefined;
  });

  it('a team checks its graph', async () => {
    const a = await createAi();
    const b = await createAi({ name: 'billing' });
    const m1 = '11111111-1111-4111-8111-111111111111';
    const m2 = '22222222-2222-4222-8222-222222222222';
    const ok = await auth(api().post('/v1.0/teams')).send({
      name: 'desk',
      detail: '',
      start_member_id: m1,
      members: [
        { id: m1, name: 'greeter', ai_id: a.id, transitions: [{ function_name: 'to_billing', description: 'billing questions', next_member_id: m2 }] },
        { id: m2, name: 'billing', ai_id: b.id },
      ],
    });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(ok.body.members[1].transitions).to.deep.equal([]);
    const badStart = await auth(api().post('/v1.0/teams')).send({ name: 'x', start_member_id: m2, members: [{ id: m1, name: 'g', ai_id: a.id }] });
    expect(badStart.status).to.equal(400);
    expect(badStart.body.error.message).to.include('start_member_id');
    const reserved = await auth(api().post('/v1.0/teams')).send({
      name: 'x',
      start_member_id: m1,
      members: [{ id: m1, name: 'g', ai_id: a.id, transitions: [{ function_name: 'stop_flow', description: 'x', next_member_id: m1 }] }],
    });
    expect(reserved.status).to.equal(400);
    expect((await auth(api().post('/v1.0/teams')).send({ name: 'x', start_member_id: m1, members: [] })).status).to.equal(400);
  });

  it('a team hands the conversation to the next member when the LLM calls the transition function', async () => {
    const a = await createAi({ init_prompt: 'You are the greeter.' });
    const b = await createAi({ name: 'billing', init_prompt: 'You are the billing expert.' });
    const m1 = '33333333-3333-4333-8333-333333333333';
    const m2 = '44444444-4444-4444-8444-444444444444';
    const team = await auth(api().post('/v1.0/teams'))
      .send({
        name: 'desk',
        start_member_id: m1,
        members: [
          { id: m1, name: 'greeter', ai_id: a.id, transitions: [{ function_name: 'to_billing', description: 'billing questions', next_member_id: m2 }] },
          { id: m2, name: 'billing', ai_id: b.id },
        ],
      })
      .expect(200);
    const prompts: string[] = [];
    llm.options.respond = (req) => {
      prompts.push(req.messages[0]!.content ?? '');
      if (req.messages.at(-1)?.role === 'tool') return { text: 'Your invoice is paid.' };
      return req.tools?.some((t) => t.function.name === 'to_billing') ? { tool_calls: [{ name: 'to_billing', arguments: {} }] } : { text: 'unexpected' };
    };
    const call = await auth(api().post('/v1.0/aicalls')).send({ assistance_type: 'team', assistance_id: team.body.id, reference_type: 'conversation' }).expect(200);
    expect(call.body.current_member_id).to.equal(m1);
    await auth(api().post('/v1.0/aimessages')).send({ aicall_id: call.body.id, role: 'user', content: 'Is my invoice paid?' }).expect(200);
    await until(
      async () => {
        const r = (await auth(api().get('/v1.0/aimessages')).query({ aicall_id: call.body.id })).body.result;
        return r.some((m: { content: string }) => m.content === 'Your invoice is paid.');
      },
      10_000,
      'answer from the billing member',
    );
    expect(prompts).to.deep.equal(['You are the greeter.', 'You are the billing expert.']);
    const after = (await auth(api().get(`/v1.0/aicalls/${call.body.id}`))).body;
    expect(after.current_member_id).to.equal(m2);
    const msgs = (await auth(api().get('/v1.0/aimessages')).query({ aicall_id: call.body.id })).body.result;
    expect(msgs.find((m: { role: string; content: string }) => m.role === 'assistant' && m.content === 'Your invoice is paid.').active_ai_id).to.equal(b.id);
    llm.options.respond = undefined;
  });

  async function upload(name: string, text: string, type = 'text/plain') {
    const r = await auth(api().post('/v1.0/storage_files')).send({ filename: name, content: Buffer.from(text).toString('base64'), content_type: type });
    expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 201]);
    return r.body.id as string;
  }

  it('ingests a storage file and a URL into chunks; duplicates 409, no sources 400; retrieval puts the right chunk into the LLM request; DELETE cascades', async () => {
    const doc = [
      'Opening hours. The shop is open from nine in the morning until six in the evening, Monday to Saturday.',
      'Returns. Goods can be returned within thirty days with the receipt.',
      'Shipping. Parcels leave the warehouse every weekday at noon.',
    ].join('\n\n');
    const fileId = await upload('kb.txt', doc);
    const created = await auth(api().post('/v1.0/rags')).send({ name: 'kb', storage_file_ids: [fileId], source_urls: [`${webUrl}/faq.html`, `${webUrl}/missing.html`] });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    expect(created.body.status).to.equal('processing');
    expect(created.body.sources.map((s: { status: string }) => s.status)).to.deep.equal(['pending', 'pending', 'pending']);
    const rag = await until(
      async () => {
        const r = (await auth(api().get(`/v1.0/rags/${created.body.id}`))).body;
        return r.status === 'ready' ? r : null;
      },
      15_000,
      'rag ready',
    );
    const byKind = Object.fromEntries(rag.sources.map((s: { source_url: string; status: string; status_message: string }) => [s.source_url || 'file', s]));
    expect(byKind.file.status).to.equal('ready');
    expect(byKind.file.status_message).to.match(/\d+ chunks? created/);
    expect(byKind[`${webUrl}/faq.html`].status).to.equal('ready');
    expect(byKind[`${webUrl}/missing.html`].status).to.equal('error');
    expect(byKind[`${webUrl}/missing.html`].status_message).to.include('404');
    const chunks = await t.ctx.db('rag_chunks').where({ rag_id: rag.id });
    expect(chunks.some((c: { content: string }) => c.content.includes('blue garage'))).to.equal(true);
    expect(chunks.some((c: { content: string }) => c.content.includes('var x'))).to.equal(false);

    // bad input
    const dup = await auth(api().post(`/v1.0/rags/${rag.id}/sources`)).send({ storage_file_ids: [fileId] });
    expect(dup.status).to.equal(409);
    expect(dup.body.error.reason).to.equal('ALREADY_EXISTS');
    const none = await auth(api().post(`/v1.0/rags/${rag.id}/sources`)).send({});
    expect(none.status).to.equal(400);
    expect((await auth(api().post('/v1.0/rags')).send({ description: 'no name' })).status).to.equal(400);

    // retrieval: a text session with an AI bound to the RAG
    let seen = '';
    llm.options.respond = (req) => {
      seen = req.messages
        .filter((m) => m.role === 'system')
        .map((m) => m.content)
        .join('\n');
      return { text: `Answer to: ${lastUser(req)}` };
    };
    const ai = await createAi({ rag_id: rag.id });
    const call = await auth(api().post('/v1.0/aicalls')).send({ assistance_type: 'ai', assistance_id: ai.id, reference_type: 'task' }).expect(200);
    expect(call.body.status).to.equal('progressing');
    await auth(api().post('/v1.0/aimessages')).send({ aicall_id: call.body.id, role: 'user', content: 'Where can visitors park?' }).expect(200);
    const msgs = await until(
      async () => {
        const r = (await auth(api().get('/v1.0/aimessages')).query({ aicall_id: call.body.id })).body.result;
        return r.length >= 2 ? r : null;
      },
      10_000,
      'assistant answer',
    );
    expect(msgs.map((m: { role: string }) => m.role).sort()).to.deep.equal(['assistant', 'user']);
    expect(seen).to.include('blue garage');
    expect(seen).to.not.include('thirty days');
    expect(seen).to.include('You are the support desk of Acme.');
    llm.options.respond = (req) => {
      seen = req.messages
        .filter((m) => m.role === 'system')
        .map((m) => m.content)
        .join('\n');
      return { text: 'ok' };
    };
    await auth(api().post('/v1.0/aimessages')).send({ aicall_id: call.body.id, role: 'user', content: 'When does the shop open in the morning?' }).expect(200);
    await until(() => seen.includes('nine in the morning'), 10_000, 'second retrieval');
    llm.options.respond = undefined;
    await auth(api().post(`/v1.0/aicalls/${call.body.id}/terminate`)).expect(200);
    expect((await auth(api().get(`/v1.0/aicalls/${call.body.id}`))).body.status).to.equal('terminated');
    expect((await auth(api().post('/v1.0/aimessages')).send({ aicall_id: call.body.id, role: 'user', content: 'x' })).status).to.equal(409);

    // DELETE cascades to sources and chunks
    const del = await auth(api().delete(`/v1.0/rags/${rag.id}`)).expect(200);
    expect(del.body.sources).to.have.length(3);
    expect(await t.ctx.db('rag_chunks').where({ rag_id: rag.id })).to.have.length(0);
    expect(await t.ctx.db('rag_sources').where({ rag_id: rag.id })).to.have.length(0);
    expect((await auth(api().get(`/v1.0/rags/${rag.id}`))).status).to.equal(404);
  });

  it('embeds chunks through the provider when an embedding model is configured, and retrieves by similarity', async () => {
    process.env.AI_LLM_BASE_URL = llm.url;
    process.env.AI_LLM_API_KEY = 'sk-test-0123456789abcdef';
    process.env.AI_EMBEDDING_MODEL = 'embed-small';
    try {
      const fileId = await upload('pets.md', 'Dogs are allowed on the terrace.\n\nCats must stay at home.\n\nThe café serves coffee until midnight.');
      const r = await auth(api().post('/v1.0/rags'))
        .send({ name: 'pets', storage_file_ids: [fileId] })
        .expect(200);
      await until(async () => (await auth(api().get(`/v1.0/rags/${r.body.id}`))).body.status === 'ready', 10_000, 'rag ready');
      const chunks = await t.ctx.db('rag_chunks').where({ rag_id: r.body.id });
      expect(chunks.every((c: { embedding: unknown }) => Array.isArray(c.embedding))).to.equal(true);
      expect(llm.embeddingRequests.some((e) => e.model === 'embed-small')).to.equal(true);
      const hits = await retrieve(t.ctx.db, r.body.id, 'coffee served until when', 1, process.env, t.ctx.egress);
      expect(hits[0]!.content).to.include('coffee');
    } finally {
      delete process.env.AI_LLM_BASE_URL;
      delete process.env.AI_LLM_API_KEY;
      delete process.env.AI_EMBEDDING_MODEL;
    }
  });

  it('without an LLM endpoint: a text session and a summary fail with a clear error', async () => {
    const r = await auth(api().post('/v1.0/ais')).send({ name: 'unconfigured', engine_model: 'openai.gpt-5' }).expect(200);
    const s = await auth(api().post('/v1.0/aicalls')).send({ assistance_type: 'ai', assistance_id: r.body.id, reference_type: 'task' });
    expect(s.status).to.equal(400);
    expect(s.body.error.message).to.include('no LLM endpoint is configured');
    const call = await t.ctx.db('calls').first();
    const sum = await auth(api().post('/v1.0/summaries')).send({ reference_type: 'recording', reference_id: '6f1c8a5e-1111-4222-8333-944444444444' });
    expect(sum.status).to.equal(404);
    void call;
  });

  it('engine_model: openai-realtime.<model> (a speech-to-speech model) is accepted; an unknown target is refused naming it', async () => {
    const r = await auth(api().post('/v1.0/ais')).send({ name: 'rt', engine_model: 'openai-realtime.gpt-realtime' }).expect(200);
    expect(r.body.engine_model).to.equal('openai-realtime.gpt-realtime');
    const bad = await auth(api().post('/v1.0/ais')).send({ name: 'rt2', engine_model: 'someone-realtime.x' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.include('target "someone-realtime" has no adapter').and.include('openai-realtime.<model>');
    // a speech-to-speech model has no text session
    const s = await auth(api().post('/v1.0/aicalls')).send({ assistance_type: 'ai', assistance_id: r.body.id, reference_type: 'task' });
    expect(s.status).to.equal(400);
    expect(s.body.error.message).to.include('speech-to-speech model');
    // documented in the OpenAPI document
    const doc = JSON.stringify((await api().get('/v1.0/openapi.json').expect(200)).body);
    expect(doc).to.include('openai-realtime.<model>');
  });

  it('engine_model: gemini-live.<model> and deepgram-agent.<think model> are accepted as speech-to-speech models; a target with no model is refused', async () => {
    for (const engine_model of ['gemini-live.gemini-2.5-flash-native-audio-preview-09-2025', 'deepgram-agent.gpt-4o-mini']) {
      const r = await auth(api().post('/v1.0/ais')).send({ name: 's2s', engine_model }).expect(200);
      expect(r.body.engine_model).to.equal(engine_model);
      const s = await auth(api().post('/v1.0/aicalls')).send({ assistance_type: 'ai', assistance_id: r.body.id, reference_type: 'task' });
      expect(s.status).to.equal(400);
      expect(s.body.error.message).to.include('speech-to-speech model');
    }
    const bad = await auth(api().post('/v1.0/ais')).send({ name: 's2s', engine_model: 'gemini-live.' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.include('engine_model');
    // parameter.greeting (the speech-to-speech greeting) is a string
    const notText = await auth(api().post('/v1.0/ais')).send({ name: 's2s', engine_model: 'deepgram-agent.gpt-4o-mini', parameter: { greeting: 42 } });
    expect(notText.status).to.equal(400);
    expect(notText.body.error.message).to.include('parameter.greeting must be a string');
    const doc = JSON.stringify((await api().get('/v1.0/openapi.json').expect(200)).body);
    expect(doc).to.include('gemini-live.<model>').and.include('deepgram-agent.<think model>');
  });
});
