// Cloud voices on real calls: sipp calls a number whose flow runs ai_talk; the AI greets the caller
// through a vendor's stand-in (testkit/vendors: the vendor's wire protocol on loopback, a marker tone
// per vendor) and the test hears which vendor spoke on its RTP sink. A refused key ends the flow
// with a clear error and an aicall_tts_failed event; a failing vendor falls back (with an event) only
// when a fallback voice is configured; the first byte's time is on the turn's span.
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { aisRepo } from '../../core/repos/ais';
import { teamsRepo } from '../../core/repos/teams';
import { repos } from '../../core/repos';
import { testDb, truncateAll } from '../../testkit/db';
import { startLlmServer, type LlmServer } from '../../testkit/llm-server';
import { eventsFor, killAllSipp, sipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { aiCallerScenario, speechPcap, TimedSink } from '../../testkit/ai/audio';
import { lastUser } from '../../testkit/llm-server';
import { startTracing } from '../../core/tracing';
import { OtlpReceiver } from '../support/otlp-receiver';
import { MARKER_HZ, type StandIn, type StandInVendor } from '../../testkit/vendors/marker';
import { startElevenLabs } from '../../testkit/vendors/elevenlabs';
import { startCartesia } from '../../testkit/vendors/cartesia';
import { startDeepgramSpeak } from '../../testkit/vendors/deepgram';
import { startOpenAiSpeech } from '../../testkit/vendors/openai';
import { startAzureSpeech } from '../../testkit/vendors/azure';
import { startLmnt } from '../../testkit/vendors/lmnt';
import { endedActiveflow } from '../../testkit/call-ends';

const GREETING = 'Hello, thank you for calling the shop. How can I help you today?';
const FREQS = Object.values(MARKER_HZ);

describe('ai: cloud voices on a live call', function () {
  this.timeout(120_000);
  let p: Platform;
  let llm: LlmServer;
  const vendors = {} as Record<StandInVendor, StandIn>;
  let seq = 0;

  before(async () => {
    await truncateAll();
    llm = await startLlmServer();
    llm.options.respond = (req) => (req.messages.some((m) => m.role === 'user') ? { text: '' } : { text: GREETING, tool_calls: [{ name: 'stop_service', arguments: {} }] });
    vendors.elevenlabs = await startElevenLabs({ firstByteMs: 100 });
    vendors.cartesia = await startCartesia({ firstByteMs: 100 });
    vendors.deepgram = await startDeepgramSpeak({ firstByteMs: 100 });
    vendors.openai = await startOpenAiSpeech({ firstByteMs: 100 });
    vendors.azure = await startAzureSpeech({ firstByteMs: 100 });
    vendors.lmnt = await startLmnt({ firstByteMs: 100 });
    p = await startPlatform({
      EGRESS_ALLOW_CIDRS: '127.0.0.0/8', // the LLM server and the vendors' stand-ins are on loopback
      ELEVENLABS_BASE_URL: vendors.elevenlabs.url,
      ELEVENLABS_API_KEY: 'el-test-key',
      CARTESIA_BASE_URL: vendors.cartesia.url,
      CARTESIA_API_KEY: 'ca-test-key',
      DEEPGRAM_BASE_URL: vendors.deepgram.url,
      DEEPGRAM_API_KEY: 'dg-test-key',
      OPENAI_BASE_URL: `${vendors.openai.url}/v1`,
      OPENAI_API_KEY: 'sk-openai-test',
      AZURE_BASE_URL: vendors.azure.url,
      AZURE_API_KEY: 'az-test-key',
      LMNT_BASE_URL: vendors.lmnt.url,
      LMNT_API_KEY: 'lmnt-test-key',
    });
  });
  after(async () => {
    killAllSipp();
    await p?.close();
    await llm?.close();
    for (const v of Object.values(vendors)) await v?.close();
  });

  /** An AI with this voice, a flow [answer, ai_talk, hangup] and a number. */
  async function setUp(tts: string, parameter: Record<string, unknown> = {}) {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `v${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'v' })).id;
    await trunksRepo(db).create(cid, `trv${Date.now()}${seq}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const ai = await aisRepo(db).create(cid, { name: 'voice', init_prompt: 'Greet the caller.', engine_model: 'openai.gpt-test', engine_url: llm.url, tool_names: ['all'], tts_type: tts, parameter });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: ai.id, duration: 30 } }, { type: 'hangup' }]),
    });
    const number = `+8992200${String(++seq).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    return { db, cid, number };
  }

  /** Calls the number; returns which marker tone each voiced packet carried, and the flow's end. */
  async function call(number: string, plays: { atMs: number; pcap: string }[] = []) {
    const sink = await TimedSink.open();
    try {
      const r = await sipp(aiCallerScenario(`${number}@127.0.0.1:${p.sipPort}`, sink.port, plays), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 })
        .done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      return sink.dominantTones(FREQS);
    } finally {
      sink.close();
    }
  }

  async function endOf(db: Awaited<ReturnType<typeof testDb>>, cid: string) {
    const c = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 15_000, 'call hangup');
    const af = await endedActiveflow(c.activeflow_id);
    const aicall = (await db('aicalls').where({ customer_id: cid }))[0];
    return { af, aicall, events: await eventsFor(p.redis, aicall.id) };
  }

  for (const vendor of ['elevenlabs', 'cartesia', 'deepgram', 'openai', 'azure', 'lmnt'] as const) {
    it(`${vendor}: the greeting is spoken by the vendor (its marker tone heard on the call), in its telephony format`, async () => {
      const before = vendors[vendor].requests.length;
      const { db, cid, number } = await setUp(vendor);
      const tones = await call(number);
      const mine = tones.get(MARKER_HZ[vendor]) ?? 0;
      expect(mine, `packets with ${vendor}'s tone (${JSON.stringify([...tones])})`).to.be.greaterThan(50);
      for (const f of FREQS) if (f !== MARKER_HZ[vendor]) expect(tones.get(f) ?? 0, `${f} Hz`).to.equal(0);
      expect(tones.get('none') ?? 0, 'no espeak-ng speech').to.be.lessThan(5);
      expect(vendors[vendor].requests.length).to.be.greaterThan(before);
      const { af } = await endOf(db, cid);
      expect(af.end_reason, af.error).to.not.equal('error');
    });
  }

  it('a refused key: the flow ends with a clear error naming the vendor and an aicall_tts_failed event; nothing else speaks', async () => {
    const { db, cid, number } = await setUp('elevenlabs', { tts_key: 'wrong-key-123456' });
    const tones = await call(number);
    expect(tones.get('none') ?? 0, 'no espeak-ng fallback').to.equal(0);
    expect(tones.get(MARKER_HZ.elevenlabs) ?? 0).to.equal(0);
    const { af, events } = await endOf(db, cid);
    expect(af.end_reason).to.equal('error');
    expect(af.error).to.include('elevenlabs: the API key was refused (HTTP 401)');
    expect(af.error).to.not.include('wrong-key');
    const failed = events.find((e) => e.event_type === 'aicall_tts_failed');
    expect(failed?.data).to.include({ tts_type: 'elevenlabs' });
    expect(String(failed?.data.reason)).to.include('401');
    expect(vendors.elevenlabs.requests.at(-1)!.headers['xi-api-key']).to.equal('wrong-key-123456');
  });

  it('a vendor failing mid-call with a fallback configured: the fallback speaks, with an aicall_tts_fallback event', async () => {
    vendors.deepgram.options.failStatus = 503;
    try {
      const { db, cid, number } = await setUp('deepgram', { tts_fallback: { tts_type: 'cartesia' } });
      const tones = await call(number);
      expect(tones.get(MARKER_HZ.cartesia) ?? 0, JSON.stringify([...tones])).to.be.greaterThan(50);
      expect(tones.get(MARKER_HZ.deepgram) ?? 0).to.equal(0);
      const { af, events } = await endOf(db, cid);
      expect(af.end_reason, af.error).to.not.equal('error');
      const fb = events.find((e) => e.event_type === 'aicall_tts_fallback');
      expect(fb?.data).to.include({ tts_type: 'deepgram', fallback_tts_type: 'cartesia' });
      expect(String(fb?.data.reason)).to.include('HTTP 503');
    } finally {
      delete vendors.deepgram.options.failStatus;
    }
  });

  it('the same failure without a fallback: the error, not another voice', async () => {
    vendors.deepgram.options.failStatus = 503;
    try {
      const { db, cid, number } = await setUp('deepgram');
      const tones = await call(number);
      expect(
        [...tones.values()].reduce((a, b) => a + b, 0),
        JSON.stringify([...tones]),
      ).to.equal(0);
      const { af, events } = await endOf(db, cid);
      expect(af.error).to.include('deepgram: synthesis failed (HTTP 503)');
      expect(events.map((e) => e.event_type))
        .to.include('aicall_tts_failed')
        .and.not.include('aicall_tts_fallback');
    } finally {
      delete vendors.deepgram.options.failStatus;
    }
  });

  it('a slow vendor (no first byte within parameter.tts_first_byte_ms) falls back to a local voice', async () => {
    vendors.openai.options.firstByteMs = 3000;
    try {
      const { db, cid, number } = await setUp('openai', { tts_fallback: 'provider_a', tts_first_byte_ms: 400 });
      const tones = await call(number);
      expect(tones.get(MARKER_HZ.openai) ?? 0).to.equal(0);
      expect(tones.get('none') ?? 0, 'espeak-ng speech, chosen as the fallback').to.be.greaterThan(20);
      const { events } = await endOf(db, cid);
      const fb = events.find((e) => e.event_type === 'aicall_tts_fallback');
      expect(fb?.data).to.include({ tts_type: 'openai', fallback_tts_type: 'provider_a' });
      expect(String(fb?.data.reason)).to.include('no audio within 400 ms');
    } finally {
      vendors.openai.options.firstByteMs = 100;
    }
  });

  it('an AI stored with a voice that has no adapter (written around the API) ends the flow with that said, never espeak-ng', async () => {
    const { db, cid, number } = await setUp('hume');
    const tones = await call(number);
    expect([...tones.values()].reduce((a, b) => a + b, 0)).to.equal(0);
    const { af } = await endOf(db, cid);
    expect(af.error).to.include('tts_type "hume" has no adapter');
  });

  it('talk with a voice it cannot speak (stored around the API) fails the flow naming it, never the default voice', async () => {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `t${Date.now()}${Math.random()}@example.test`, status: 'active', name: 't' })).id;
    await trunksRepo(db).create(cid, `trt${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    // parsed with a valid voice, then stored with the one the API refuses (as a flow written before the check)
    const actions = parseActions([{ type: 'answer' }, { type: 'talk', option: { text: 'This must not be said by another voice.', provider: 'provider_a' } }, { type: 'hangup' }]);
    (actions[1]!.option as { provider: string }).provider = 'elevenlabs';
    const flow = await flowsRepo(db).create({ customer_id: cid, actions });
    const number = `+8992200${String(++seq).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    const tones = await call(number);
    expect(
      [...tones.values()].reduce((a, b) => a + b, 0),
      'nothing spoken',
    ).to.equal(0);
    const c = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 15_000, 'call hangup');
    const af = await endedActiveflow(c.activeflow_id);
    expect(af.end_reason).to.equal('error');
    expect(af.error).to.include('elevenlabs');
  });

  it("each caller turn's span carries the voice's time to first byte (openvoice.ai.tts_first_byte_ms)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'voices-'));
    const otlp = await OtlpReceiver.start();
    const tracing = startTracing('voices-test', { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '100' })!;
    const respond = llm.options.respond;
    vendors.cartesia.options.firstByteMs = 250;
    try {
      const q = path.join(dir, 'q.pcap');
      speechPcap('What are your opening hours?', q);
      llm.options.respond = (req) => (lastUser(req) ? { text: 'We open at nine.', tool_calls: [{ name: 'stop_service', arguments: {} }] } : { text: '' });
      const { number } = await setUp('cartesia', { stt_phrases: ['what are your opening hours'] });
      const tones = await call(number, [{ atMs: 1000, pcap: q }]);
      expect(tones.get(MARKER_HZ.cartesia) ?? 0).to.be.greaterThan(10);
      const turn = await until(
        async () => {
          await tracing.flush();
          return otlp.spans.find((x) => x.name === 'ai turn' && x.attributes['openvoice.ai.turn_outcome'] === 'answered') ?? null;
        },
        20_000,
        'an answered ai turn span',
      );
      const ttfb = turn.attributes['openvoice.ai.tts_first_byte_ms'] as number;
      expect(ttfb, 'the stand-in waits 250 ms').to.be.a('number').and.at.least(250).and.below(2000);
    } finally {
      vendors.cartesia.options.firstByteMs = 100;
      llm.options.respond = respond;
      await tracing.shutdown();
      await otlp.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('azure: the spoken text is XML-escaped into the SSML (a greeting with < and & is spoken, not taken as markup)', async () => {
    const respond = llm.options.respond;
    llm.options.respond = (req) =>
      req.messages.some((m) => m.role === 'user') ? { text: '' } : { text: 'Prices <today> are 5 & up, "really".', tool_calls: [{ name: 'stop_service', arguments: {} }] };
    try {
      const { number } = await setUp('azure');
      const tones = await call(number);
      expect(tones.get(MARKER_HZ.azure) ?? 0, JSON.stringify([...tones])).to.be.greaterThan(10);
      const ssml = vendors.azure.requests.at(-1)!.body as string;
      expect(ssml).to.include('Prices &lt;today&gt; are 5 &amp; up, &quot;really&quot;.');
    } finally {
      llm.options.respond = respond;
    }
  });

  it("a team: after a hand-off the next member speaks with its own AI's voice, not the first member's", async () => {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `tm${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'tm' })).id;
    await trunksRepo(db).create(cid, `trtm${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const base = { engine_model: 'openai.gpt-test', engine_url: llm.url, tool_names: ['all'] as string[] };
    const greeter = await aisRepo(db).create(cid, { ...base, name: 'greeter', init_prompt: 'You are the greeter.', tts_type: 'elevenlabs' });
    const billing = await aisRepo(db).create(cid, { ...base, name: 'billing', init_prompt: 'You are the billing expert.', tts_type: 'cartesia' });
    const m1 = '33333333-3333-4333-8333-333333333333';
    const m2 = '44444444-4444-4444-8444-444444444444';
    const team = await teamsRepo(db).create(cid, {
      name: 'desk',
      start_member_id: m1,
      members: [
        { id: m1, name: 'greeter', ai_id: greeter.id, transitions: [{ function_name: 'to_billing', description: 'billing', next_member_id: m2 }] },
        { id: m2, name: 'billing', ai_id: billing.id, transitions: [] },
      ],
    });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'team', assistance_id: team.id, duration: 30 } }, { type: 'hangup' }]),
    });
    const number = `+8992200${String(++seq).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    const respond = llm.options.respond;
    let billingTurns = 0;
    llm.options.respond = (req) => {
      if (req.tools?.some((t) => t.function.name === 'to_billing')) return { text: 'Let me pass you to our billing desk right away.', tool_calls: [{ name: 'to_billing', arguments: {} }] };
      return ++billingTurns === 1 ? { text: 'This is billing, your last invoice has been paid in full.', tool_calls: [{ name: 'stop_service', arguments: {} }] } : { text: '' };
    };
    try {
      const tones = await call(number);
      expect(tones.get(MARKER_HZ.elevenlabs) ?? 0, `the greeter's voice ${JSON.stringify([...tones])}`).to.be.greaterThan(20);
      expect(tones.get(MARKER_HZ.cartesia) ?? 0, `the billing member's voice ${JSON.stringify([...tones])}`).to.be.greaterThan(20);
    } finally {
      llm.options.respond = respond;
    }
  });
});
