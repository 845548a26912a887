// Summaries through the LLM interface: from a recording's audio (no transcripts: STT over the WAV),
// from a transcribe's transcripts, regenerate (recordings only), and the bad-input answers.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { startLlmServer, type LlmServer } from '../../testkit/llm-server';
import { until } from '../../testkit/media-app/harness';
import { EMPTY_UUID, newId } from '../../core/ids';
import { recordingPath } from '../../core/storage/local';
import { insertRecording } from '../../testkit/recordings';

describe('ai: summaries', function () {
  this.timeout(60_000);
  let t: TestApp;
  let f: Fixture;
  let llm: LlmServer;
  let transcriptSeen = '';
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${f.token}`);

  before(async () => {
    // the LLM and web servers are on loopback: opened explicitly
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } });
    f = await createFixture(t.ctx);
    llm = await startLlmServer({
      respond: (req) => {
        transcriptSeen = req.messages.find((m) => m.role === 'user')?.content ?? '';
        return { text: `Summary (${req.messages[0]!.content?.match(/language (\S+)\./)?.[1]}): the caller asked a question.` };
      },
    });
    process.env.AI_LLM_BASE_URL = llm.url;
  });
  after(async () => {
    delete process.env.AI_LLM_BASE_URL;
    await llm?.close();
    await t?.close();
  });

  async function recording(): Promise<string> {
    const id = newId();
    const filename = `${id}.wav`;
    const file = recordingPath(t.ctx.config.dataDir, filename)!;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.espeak.wav`;
    execFileSync('espeak-ng', ['-w', tmp, 'Hello, I would like to cancel my order please.']);
    execFileSync('sox', [tmp, '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', file]);
    fs.rmSync(tmp);
    await insertRecording(t.ctx.db, f.customer.id, id, filename);
    return id;
  }

  it('summarises a recording by running STT over its audio; regenerate replaces the content', async () => {
    const rec = await recording();
    const r = await auth(request(t.app).post('/v1.0/summaries')).send({ reference_type: 'recording', reference_id: rec, language: 'en-US' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.include({ status: 'progressing', content: '', reference_type: 'recording', reference_id: rec });
    const done = await until(
      async () => {
        const g = (await auth(request(t.app).get(`/v1.0/summaries/${r.body.id}`))).body;
        return g.status === 'done' ? g : null;
      },
      30_000,
      'summary done',
    );
    expect(done.content).to.equal('Summary (en-US): the caller asked a question.');
    // pocketsphinx is weak on free speech: some recognised words reach the LLM
    expect(transcriptSeen).to.match(/[a-z]+/);
    const again = await auth(request(t.app).post(`/v1.0/summaries/${r.body.id}/regenerate`)).send({ language: 'de-DE' });
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    const sm = (await t.ctx.db('summaries').where({ id: r.body.id }).first())!.status_message;
    expect(again.body.content, sm).to.equal('Summary (de-DE): the caller asked a question.');
    expect(again.body.language).to.equal('de-DE');
    // the same record under /aisummaries
    expect((await auth(request(t.app).get(`/v1.0/aisummaries/${r.body.id}`))).body.id).to.equal(r.body.id);
  });

  it('summarises a transcribe from its transcripts; regenerate is refused for it', async () => {
    const tr = newId();
    await t.ctx.db('transcribes').insert({
      id: tr,
      customer_id: f.customer.id,
      activeflow_id: EMPTY_UUID,
      on_end_flow_id: EMPTY_UUID,
      reference_type: 'call',
      reference_id: newId(),
      status: 'done',
      tm_create: new Date(),
    });
    const now = Date.now();
    await t.ctx.db('transcripts').insert([
      { id: newId(), customer_id: f.customer.id, transcribe_id: tr, direction: 'in', message: 'I want to cancel my order', offset_ms: 0, tm_transcript: new Date(now), tm_create: new Date(now) },
      {
        id: newId(),
        customer_id: f.customer.id,
        transcribe_id: tr,
        direction: 'out',
        message: 'Your order is cancelled',
        offset_ms: 2000,
        tm_transcript: new Date(now + 2000),
        tm_create: new Date(now),
      },
    ]);
    const r = await auth(request(t.app).post('/v1.0/aisummaries')).send({ reference_type: 'transcribe', reference_id: tr });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    await until(async () => (await auth(request(t.app).get(`/v1.0/summaries/${r.body.id}`))).body.status === 'done', 10_000, 'summary done');
    expect(transcriptSeen).to.equal('Caller: I want to cancel my order\nAgent: Your order is cancelled');
    const re = await auth(request(t.app).post(`/v1.0/summaries/${r.body.id}/regenerate`)).send({});
    expect(re.status).to.equal(400);
    expect(re.body.error.message).to.include('recordings');
  });

  it('refuses bad input, and says so clearly without an LLM endpoint', async () => {
    expect((await auth(request(t.app).post('/v1.0/summaries')).send({ reference_type: 'fax', reference_id: newId() })).status).to.equal(400);
    expect((await auth(request(t.app).post('/v1.0/summaries')).send({ reference_type: 'recording' })).status).to.equal(400);
    expect((await auth(request(t.app).post('/v1.0/summaries')).send({ reference_type: 'recording', reference_id: newId() })).status).to.equal(404);
    const rec = await recording();
    delete process.env.AI_LLM_BASE_URL;
    try {
      const r = await auth(request(t.app).post('/v1.0/summaries')).send({ reference_type: 'recording', reference_id: rec });
      expect(r.status).to.equal(503);
      expect(r.body.error.message).to.include('no LLM endpoint is configured');
    } finally {
      process.env.AI_LLM_BASE_URL = llm.url;
    }
  });
});
