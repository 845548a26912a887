// The VAD of ai_talk (docs/ai.md "Turn-taking", `vad_config.engine`) on live calls: sipp calls a
// number whose flow runs ai_talk; the LLM stand-in answers the greeting late (the agent is
// "thinking"), and caller audio during that time aborts the greeting when the VAD takes it for
// speech. Speech ("What time is it.") is speech for both Silero and fvad (the greeting is dropped);
// brown noise (a rumbling line at -15 dBFS) is speech for fvad (the greeting is dropped) and not for
// Silero (the greeting plays). Bad `vad_config.engine` values are 400s naming the field.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture } from '../../testkit/api';
import { lastUser, type LlmServer } from '../../testkit/llm-server';
import { sipp, type Platform } from '../../testkit/media-app/harness';
import { aiCallerScenario, speechPcap, TimedSink, writeRtpPcap } from '../../testkit/ai/audio';
import { useLiveAiStack } from '../../testkit/ai/turn-calls';
import { aiTalkNumber } from '../../testkit/ai/turn-calls';

const GREETING = 'Hello, and welcome to the shop. How can I help you today?';
/** the LLM's delay before its first token: the agent thinks this long before the greeting */
const THINK_MS = 2500;

describe('ai_talk VAD engines', function () {
  this.timeout(150_000);
  let p: Platform;
  let llm: LlmServer;
  let dir: string;
  let seq = 0;
  let noise: string;
  let speech: string;
  useLiveAiStack('ai-vad-', { firstChunkDelayMs: THINK_MS }, (s) => ({ p, llm, dir } = s));
  before(() => {
    llm.options.respond = (req) => (lastUser(req) && req.messages.at(-1)?.role !== 'tool' ? { tool_calls: [{ name: 'stop_flow', arguments: {} }] } : { text: lastUser(req) ? '' : GREETING });
    // 2 s of brown noise at -15 dBFS as the phone carries it (8 kHz µ-law), then silence
    const ul = path.join(dir, 'noise.ul');
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-t', 'ul', ul, 'synth', '2', 'brownnoise', 'gain', '-15']);
    noise = path.join(dir, 'noise.pcap');
    writeRtpPcap(noise, Buffer.concat([fs.readFileSync(ul), Buffer.alloc(8000 * 4, 0xff)]));
    speech = path.join(dir, 'speech.pcap');
    speechPcap('What time is it.', speech, { leadMs: 0, trailMs: 4000 });
  });

  async function setUp(engine: string) {
    const { number } = await aiTalkNumber({
      llmUrl: llm.url,
      tag: 'vad',
      number: `+8991400${String(++seq).padStart(5, '0')}`,
      duration: 9,
      ai: { parameter: { stt_phrases: ['what time is it'], min_endpointing_delay_ms: 400 }, vad_config: { engine } },
    });
    return number;
  }

  /** Plays `pcap` 300 ms after the answer (while the agent thinks); returns how many voiced packets the agent sent. */
  async function greetingPackets(engine: string, pcap: string): Promise<number> {
    const number = await setUp(engine);
    const sink = await TimedSink.open();
    try {
      const r = await sipp(aiCallerScenario(`${number}@127.0.0.1:${p.sipPort}`, sink.port, [{ atMs: 300, pcap }]), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '40s'], {
        killAfterMs: 45_000,
      }).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    return sink.voicedTimes().length;
  }

  for (const engine of ['silero', 'webrtc'] as const) {
    it(`${engine}: the caller's speech while the agent thinks is speech (the greeting is dropped)`, async () => {
      expect(await greetingPackets(engine, speech), 'greeting packets').to.be.below(10);
    });
  }

  it('silero: brown noise while the agent thinks is not speech (the greeting plays)', async () => {
    expect(await greetingPackets('silero', noise), 'greeting packets').to.be.above(80);
  });

  it('webrtc: fvad takes the same noise for speech (the greeting is dropped)', async () => {
    expect(await greetingPackets('webrtc', noise), 'greeting packets').to.be.below(10);
  });

  it('refuses a bad vad_config.engine with a 400 naming the field; good ones are stored', async () => {
    const t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    try {
      const f = await createFixture(t.ctx);
      const create = (vad_config: Record<string, unknown>) =>
        request(t.app).post('/v1.0/ais').set('Authorization', `Bearer ${f.token}`).send({ name: 'bot', engine_model: 'openai.gpt-5', vad_config });
      for (const engine of ['fvad', 'SILERO', 3, '', null]) {
        const r = await create({ engine });
        expect(r.status, JSON.stringify(r.body)).to.equal(400);
        expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
        expect(JSON.stringify(r.body.error)).to.include('vad_config.engine');
      }
      const ok = await create({ engine: 'webrtc', stop_secs: 0.4 });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      expect(ok.body.vad_config).to.deep.equal({ engine: 'webrtc', stop_secs: 0.4 });
      // a refused update keeps what was stored
      const put = await request(t.app)
        .put(`/v1.0/ais/${ok.body.id}`)
        .set('Authorization', `Bearer ${f.token}`)
        .send({ vad_config: { engine: 'neural' } });
      expect(put.status).to.equal(400);
      const got = await request(t.app).get(`/v1.0/ais/${ok.body.id}`).set('Authorization', `Bearer ${f.token}`);
      expect(got.body.vad_config.engine).to.equal('webrtc');
    } finally {
      await t.close();
    }
  });
});
