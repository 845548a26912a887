// AI vendor keys at rest (docs/ai.md "Keys"): the rows in Postgres hold only `enc:v1:` envelopes
// (read directly), the API still shows them masked and keeps a masked key PUT back; on a real call
// (sipp) the LLM stand-in and the ElevenLabs stand-in receive the AI's own keys decrypted; a
// tampered envelope ends the flow with a clear error and nothing reaches the vendor; migration 0958
// seals the keys of rows written before it, and running it again changes nothing.
import { expect } from 'chai';
import request from 'supertest';
import { aisRepo } from '../../core/repos/ais';
import { aicallsRepo } from '../../core/repos/ai-calls';
import { deriveKey, openKey, SealedKeyError } from '../../core/secrets/keys';
import { resolveEndpoint } from '../../core/llm/endpoint';
import { LlmError } from '../../core/llm/client';
import { up as migrate0958 } from '../../core/db/migrations/0958_ai_keys_encrypted';
import { useTestApp, TEST_JWT_SECRET, type Fixture, type TestApp } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { killAllSipp, startPlatform, type Platform } from '../../testkit/media-app/harness';
import { startLlmServer, type LlmServer } from '../../testkit/llm-server';
import { startElevenLabs } from '../../testkit/vendors/elevenlabs';
import type { StandIn } from '../../testkit/vendors/marker';
import type { Db } from '../../core/db/knex';
import { aiFlow, callAi, endedFlow } from '../../testkit/ai/flow-call';

const KEYS = {
  engine: 'sk-engine-own-0123456789abcdef',
  tts: 'el-own-tts-key-0123456789wxyz',
  ttsFallback: 'ca-fallback-key-9876543210',
  llmFallback: 'xai-fallback-key-0011223344',
  stt: 'dg-own-stt-key-5566778899',
};
const KEK = deriveKey(TEST_JWT_SECRET);
type Stored = { engine_key: string; parameter: { tts_key: string; stt_key?: string; greeting?: string; tts_fallback: { tts_key: string }; llm_fallback: { engine_key: string } } };
/** The row as Postgres holds it (read directly, not through the repo). */
async function rowOf(db: Db, table: 'ais' | 'aicalls', id: string): Promise<Stored> {
  const r: unknown = await db(table).where({ id }).first();
  if (!r) throw new Error(`no ${table} row ${id}`);
  return r as Stored;
}
const open = (v: unknown) => openKey(String(v), KEK);
const noPlaintext = (row: unknown) => {
  const s = JSON.stringify(row);
  for (const k of Object.values(KEYS)) expect(s, 'plaintext key in the row').to.not.include(k);
};

describe('ai: vendor keys encrypted at rest', function () {
  this.timeout(120_000);

  describe('over the API', () => {
    let t: TestApp;
    let f: Fixture;
    const auth = (r: request.Test) => r.set('Authorization', `Bearer ${f.token}`);
    useTestApp((s) => ({ t, f } = s));

    const body = {
      name: 'keyed',
      engine_model: 'openai.gpt-5',
      engine_key: KEYS.engine,
      tts_type: 'elevenlabs',
      parameter: {
        tts_key: KEYS.tts,
        stt_key: KEYS.stt,
        tts_fallback: { tts_type: 'cartesia', tts_key: KEYS.ttsFallback },
        llm_fallback: { engine_model: 'grok.grok-4', engine_url: 'https://api.x.ai/v1', engine_key: KEYS.llmFallback },
      },
    };

    it('the row holds enc:v1 envelopes that open to the keys; the API shows them masked; an aicall copy is sealed too', async () => {
      const r = await auth(request(t.app).post('/v1.0/ais')).send(body);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.engine_key).to.match(/^sk-\*+cdef$/);
      expect(r.body.parameter.tts_key).to.match(/^el-\*+wxyz$/);
      expect(r.body.parameter.tts_fallback.tts_key).to.match(/^ca-\*+3210$/);
      expect(r.body.parameter.llm_fallback.engine_key).to.match(/^xai\*+3344$/);
      expect(r.body.parameter.stt_key).to.match(/^dg-\*+8899$/);
      const row = await rowOf(t.ctx.db, 'ais', r.body.id);
      noPlaintext(row);
      for (const v of [row.engine_key, row.parameter.tts_key, row.parameter.tts_fallback.tts_key, row.parameter.llm_fallback.engine_key]) expect(v).to.match(/^enc:v1:[\w-]+:[\w-]+:[\w-]+$/);
      expect(open(row.engine_key)).to.equal(KEYS.engine);
      expect(open(row.parameter.tts_fallback.tts_key)).to.equal(KEYS.ttsFallback);
      expect(open(row.parameter.stt_key)).to.equal(KEYS.stt);
      // two seals of one key differ (a fresh IV each time)
      const again = await auth(request(t.app).post('/v1.0/ais')).send(body);
      expect((await rowOf(t.ctx.db, 'ais', again.body.id)).engine_key).to.not.equal(row.engine_key);

      const ai = await aisRepo(t.ctx.db).get(f.customer.id, r.body.id);
      const call = await aicallsRepo(t.ctx.db).create(f.customer.id, { assistance_type: 'ai', assistance_id: ai!.id, reference_type: 'call', parameter: ai!.parameter });
      noPlaintext(await rowOf(t.ctx.db, 'aicalls', call.id));
      const shown = await auth(request(t.app).get(`/v1.0/aicalls/${call.id}`));
      expect(shown.body.parameter.tts_key).to.match(/^el-\*+wxyz$/);
    });

    it('a masked key PUT back keeps the stored one; a new key replaces it (sealed)', async () => {
      const r = await auth(request(t.app).post('/v1.0/ais')).send(body);
      const got = await auth(request(t.app).get(`/v1.0/ais/${r.body.id}`));
      const put = await auth(request(t.app).put(`/v1.0/ais/${r.body.id}`)).send({
        name: 'renamed',
        engine_model: got.body.engine_model,
        engine_key: got.body.engine_key,
        tts_type: got.body.tts_type,
        parameter: got.body.parameter,
      });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      let row = await rowOf(t.ctx.db, 'ais', r.body.id);
      noPlaintext(row);
      expect([open(row.engine_key), open(row.parameter.tts_key), open(row.parameter.tts_fallback.tts_key), open(row.parameter.llm_fallback.engine_key), open(row.parameter.stt_key)]).to.deep.equal([
        KEYS.engine,
        KEYS.tts,
        KEYS.ttsFallback,
        KEYS.llmFallback,
        KEYS.stt,
      ]);
      const fresh = 'el-brand-new-key-55556666';
      const put2 = await auth(request(t.app).put(`/v1.0/ais/${r.body.id}`)).send({ engine_key: 'sk-new-engine-key-77778888', parameter: { ...got.body.parameter, tts_key: fresh } });
      expect(put2.status, JSON.stringify(put2.body)).to.equal(200);
      expect(put2.body.engine_key).to.match(/^sk-\*+8888$/);
      row = await rowOf(t.ctx.db, 'ais', r.body.id);
      expect(JSON.stringify(row)).to.not.include(fresh).and.not.include('sk-new-engine-key');
      expect([open(row.engine_key), open(row.parameter.tts_key), open(row.parameter.tts_fallback.tts_key)]).to.deep.equal(['sk-new-engine-key-77778888', fresh, KEYS.ttsFallback]);
    });

    it('a tampered or foreign envelope is a clear error, never the garbage as a key', async () => {
      const r = await auth(request(t.app).post('/v1.0/ais')).send(body);
      const row = await rowOf(t.ctx.db, 'ais', r.body.id);
      const tampered = tamper(row.engine_key as string);
      expect(() => openKey(tampered, KEK)).to.throw(SealedKeyError, 'cannot be decrypted');
      expect(() => openKey(row.engine_key as string, deriveKey('another-platform-secret-0123456789'))).to.throw(SealedKeyError, 'another platform secret');
      expect(() => openKey('enc:v1:abc', KEK)).to.throw(SealedKeyError, 'not a valid enc:v1 envelope');
      let err: unknown;
      try {
        resolveEndpoint({ engine_model: 'openai.gpt-5', engine_url: 'https://llm.example.test/v1', engine_key: tampered });
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(LlmError);
      expect((err as LlmError).code).to.equal('NOT_CONFIGURED');
      expect((err as LlmError).message)
        .to.include("the AI's engine_key")
        .and.include('cannot be decrypted');
      // the API still answers, masked (the key is unusable until set again)
      await t.ctx.db('ais').where({ id: r.body.id }).update({ engine_key: tampered });
      const got = await auth(request(t.app).get(`/v1.0/ais/${r.body.id}`));
      expect(got.status).to.equal(200);
      expect(JSON.stringify(got.body)).to.not.include(tampered);
    });

    it('migration 0958 seals the keys of rows written before it, and a second run changes nothing', async () => {
      const r = await auth(request(t.app).post('/v1.0/ais')).send({ name: 'old', engine_model: 'openai.gpt-5' });
      const legacy = {
        tts_key: KEYS.tts,
        tts_fallback: { tts_type: 'cartesia', tts_key: KEYS.ttsFallback },
        llm_fallback: { engine_model: 'grok.grok-4', engine_key: KEYS.llmFallback },
        greeting: 'Hi',
      };
      // as stored before 0958: the keys as given
      await t.ctx
        .db('ais')
        .where({ id: r.body.id })
        .update({ engine_key: KEYS.engine, parameter: JSON.stringify(legacy) });
      const [c] = await t.ctx
        .db('aicalls')
        .insert({
          id: '8a0b1c2d-0000-4000-8000-000000000958',
          customer_id: f.customer.id,
          assistance_type: 'ai',
          assistance_id: r.body.id,
          reference_type: 'call',
          status: 'terminated',
          parameter: JSON.stringify(legacy),
          tm_create: new Date(),
        })
        .returning('*');
      await migrate0958(t.ctx.db);
      const row = await rowOf(t.ctx.db, 'ais', r.body.id);
      const call = await rowOf(t.ctx.db, 'aicalls', c.id);
      noPlaintext(row);
      noPlaintext(call);
      expect(open(row.engine_key)).to.equal(KEYS.engine);
      expect(open(row.parameter.llm_fallback.engine_key)).to.equal(KEYS.llmFallback);
      expect(open(call.parameter.tts_fallback.tts_key)).to.equal(KEYS.ttsFallback);
      expect(row.parameter.greeting).to.equal('Hi');
      await migrate0958(t.ctx.db);
      const twice = await rowOf(t.ctx.db, 'ais', r.body.id);
      expect(twice.engine_key).to.equal(row.engine_key);
      expect(twice.parameter).to.deep.equal(row.parameter);
      expect((await rowOf(t.ctx.db, 'aicalls', c.id)).parameter).to.deep.equal(call.parameter);
    });
  });

  describe('on a real call', () => {
    let p: Platform;
    let llm: LlmServer;
    let el: StandIn;
    before(async () => {
      await truncateAll();
      // the stand-ins take only the AI's own keys, not the platform's
      llm = await startLlmServer({ apiKey: KEYS.engine });
      llm.options.respond = (req) => (req.messages.some((m) => m.role === 'user') ? { text: '' } : { text: 'Hello from the shop.', tool_calls: [{ name: 'stop_service', arguments: {} }] });
      el = await startElevenLabs({ apiKey: KEYS.tts, firstByteMs: 50 });
      p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', ELEVENLABS_BASE_URL: el.url, ELEVENLABS_API_KEY: 'el-platform-key' });
    });
    after(async () => {
      killAllSipp();
      await p?.close();
      await llm?.close();
      await el?.close();
    });

    const setUp = async () => {
      const s = await aiFlow({ engine_model: 'openai.gpt-test', engine_url: llm.url, engine_key: KEYS.engine, parameter: { tts_key: KEYS.tts } });
      await s.db('ais').where({ id: s.ai.id }).update({ tts_type: 'elevenlabs' });
      return s;
    };

    it('the LLM and the voice vendor receive the decrypted keys; the stored row holds none', async () => {
      const { db, cid, number, ai } = await setUp();
      noPlaintext(await rowOf(db, 'ais', ai.id));
      const r = await callAi(p, number);
      expect(r.code, r.errors + r.messages).to.equal(0);
      const { af, aicall } = await endedFlow(db, cid);
      expect(af.error).to.equal('');
      expect(llm.authHeaders).to.include(`Bearer ${KEYS.engine}`);
      expect(el.requests.map((q) => q.headers['xi-api-key'])).to.include(KEYS.tts);
      expect(r.voiced, 'the greeting heard').to.be.greaterThan(20);
      noPlaintext(await rowOf(db, 'aicalls', aicall!.id));
    });

    it('a tampered tts_key ends the flow with a clear error; the vendor receives nothing', async () => {
      const { db, cid, number, ai } = await setUp();
      const row = await rowOf(db, 'ais', ai.id);
      await db('ais')
        .where({ id: ai.id })
        .update({ parameter: JSON.stringify({ ...row.parameter, tts_key: tamper(row.parameter.tts_key) }) });
      const before = el.requests.length;
      await callAi(p, number);
      const { af } = await endedFlow(db, cid);
      expect(af.error).to.include('cannot be decrypted');
      expect(el.requests.length).to.equal(before);
    });
  });
});

/** The envelope with one byte of its ciphertext flipped. */
function tamper(sealed: string): string {
  const parts = sealed.split(':');
  const body = Buffer.from(parts[4], 'base64url');
  body[0] ^= 0x01;
  parts[4] = body.toString('base64url');
  return parts.join(':');
}
