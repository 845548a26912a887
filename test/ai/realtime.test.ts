// ai_talk with a speech-to-speech model (engine_model openai-realtime.<model>) on real calls: sipp
// calls a number whose flow runs ai_talk; the platform streams the call's audio to a stand-in of
// OpenAI's Realtime API (testkit/ai/realtime-server.ts, wss on loopback) through the official SDK,
// and plays the model's audio (tones) into the call, which the test hears on its RTP sink. The
// greeting, a caller turn, a function call run as the platform's tool, barge-in with truncation at
// what was played, aimessages from the transcripts, a refused key and a refused (private) URL.
import { endedActiveflow } from '../../testkit/call-ends';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { aisRepo } from '../../core/repos/ais';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';
import { eventsFor, sipp, until, type Platform } from '../../testkit/media-app/harness';
import { aiCallerScenario, TimedSink } from '../../testkit/ai/audio';
import { SILENT_SCRIPT, type RealtimeScript, type RealtimeServer } from '../../testkit/ai/realtime-server';
import { IDLE_SCRIPT, useCallerTurns, useRealtimeStack } from '../../testkit/ai/s2s-calls';

const KEY = 'sk-realtime-platform-key';

describe('ai_talk with a speech-to-speech model (OpenAI Realtime)', function () {
  this.timeout(120_000);
  let p: Platform;
  let rt: RealtimeServer;
  let seq = 0;
  const { q1, q2 } = useCallerTurns('ai-rt-');
  useRealtimeStack(
    'ai-rt-stack-',
    KEY,
    SILENT_SCRIPT,
    (stand) => ({ OPENAI_BASE_URL: stand.url, OPENAI_API_KEY: KEY }),
    (s) => ({ p, rt } = s),
  );

  async function setUp(script: RealtimeScript, ai: { engine_key?: string; engine_url?: string } = {}) {
    rt.script = script;
    rt.received.length = 0;
    rt.speechStartedAt.length = 0;
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `rt${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'rt' })).id;
    await trunksRepo(db).create(cid, `trrt${Date.now()}${seq}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const row = await aisRepo(db).create(cid, {
      name: 'rt',
      init_prompt: 'You take orders for ${shop}.',
      engine_model: 'openai-realtime.gpt-realtime',
      tts_voice_id: 'marin',
      tool_names: ['all'],
      parameter: { shop: 'Acme Bikes' },
      vad_config: { stop_secs: 0.6 },
      ...ai,
    });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: row.id, duration: 40 } }, { type: 'hangup' }]),
    });
    const number = `+8992200${String(++seq).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    return { db, cid, number };
  }

  async function runCall(number: string, plays: { atMs: number; pcap: string }[], sink: TimedSink) {
    const scenario = aiCallerScenario(`${number}@127.0.0.1:${p.sipPort}`, sink.port, plays);
    return sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 }).done;
  }

  async function endedFlow(db: Awaited<ReturnType<typeof testDb>>, cid: string) {
    const call = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 15_000, 'call hangup');
    return endedActiveflow(call.activeflow_id);
  }

  it('greets first, answers a caller turn, runs set_variables for a function call, stores the transcripts as aimessages', async () => {
    const { db, cid, number } = await setUp({
      greeting: { say: 'Hello, Acme Bikes, how can I help?', ms: 1200, hz: 440 },
      turn: (n) =>
        n === 0
          ? { heard: 'my order number is forty two', reply: { call: 'set_variables', arguments: { variables: { order: '42' } } } }
          : { heard: 'that is all thank you', reply: { call: 'stop_service', arguments: {} } },
      afterCall: (name) => (name === 'set_variables' ? { say: 'Noted, order forty two.', ms: 1000, hz: 660 } : null),
    });
    const sink = await TimedSink.open();
    const t0 = performance.now();
    const second = 2500 + q1.ms + 3000;
    try {
      const r = await runCall(
        number,
        [
          { atMs: 2500, pcap: q1.file },
          { atMs: second, pcap: q2.file },
        ],
        sink,
      );
      expect(r.code, r.errors + r.messages).to.equal(0);
      const voiced = sink.voicedTimes();
      // the greeting (440 Hz) comes first, before the caller says anything
      // within 1 s of the call's first RTP packet (the answer): no STT/LLM round before it
      expect(voiced[0]! - sink.packets[0]!.at, 'greeting after the media started').to.be.lessThan(1000);
      expect(voiced[0]! - t0, 'first audio after the call started').to.be.lessThan(2000);
      const tones = sink.dominantTones([440, 660]);
      expect(tones.get(440) ?? 0, 'greeting packets').to.be.within(40, 70);
      // the answer after the tool ran (660 Hz): only after the caller spoke
      expect(tones.get(660) ?? 0, 'answer packets').to.be.within(35, 60);
    } finally {
      sink.close();
    }
    const af = await endedFlow(db, cid);
    expect(af.variables).to.include({ order: '42' });
    // what the model was told
    const update = rt.received.find((e) => e.type === 'session.update')!.event.session as Record<string, unknown> & {
      audio: { input: Record<string, unknown>; output: Record<string, unknown> };
      tools: { name: string }[];
    };
    expect(update.instructions).to.equal('You take orders for Acme Bikes.');
    expect(update.audio.input).to.deep.include({ format: { type: 'audio/pcmu' } });
    expect(update.audio.input.turn_detection).to.include({ type: 'server_vad', silence_duration_ms: 600 });
    expect(update.audio.output).to.deep.include({ format: { type: 'audio/pcmu' }, voice: 'marin' });
    expect(update.tools.map((t) => t.name)).to.include.members(['set_variables', 'stop_flow', 'connect_call', 'stop_service']);
    expect(rt.received[1]?.type, 'the greeting is asked for right after the session').to.equal('response.create');
    const output = rt.received.find((e) => e.type === 'conversation.item.create')!.event.item as Record<string, unknown>;
    expect(output).to.include({ type: 'function_call_output' });
    expect(rt.appendedMs, 'caller audio streamed').to.be.greaterThan(5000);
    const aicall = await until(async () => (await db('aicalls').where({ customer_id: cid, status: 'terminated' }))[0], 10_000, 'aicall terminated');
    const msgs = (await db('aimessages').where({ aicall_id: aicall.id }).orderBy('tm_create')) as { role: string; content: string; direction: string; tool_calls: { function: { name: string } }[] }[];
    const said = msgs.filter((m) => m.role === 'assistant' && m.content).map((m) => m.content);
    expect(said).to.deep.equal(['Hello, Acme Bikes, how can I help?', 'Noted, order forty two.']);
    const heard = msgs.filter((m) => m.role === 'user');
    expect(heard.map((m) => m.content)).to.deep.equal(['my order number is forty two', 'that is all thank you']);
    expect(heard[0]!.direction).to.equal('incoming');
    const calls = msgs.filter((m) => m.tool_calls?.length).map((m) => m.tool_calls[0]!.function.name);
    expect(calls).to.deep.equal(['set_variables', 'stop_service']);
    expect(msgs.some((m) => m.role === 'tool')).to.equal(true);
  });

  it('barge-in: the caller speaks over a long answer; its audio stops and the item is truncated at what was played', async () => {
    const { db, cid, number } = await setUp({
      greeting: { say: 'This is a very long greeting that goes on and on.', ms: 8000, hz: 440 },
      turn: () => ({ heard: 'my order number is forty two', reply: { call: 'stop_flow', arguments: {} } }),
      afterCall: () => null,
    });
    const sink = await TimedSink.open();
    try {
      const r = await runCall(number, [{ atMs: 2500, pcap: q1.file }], sink);
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    const truncate = rt.received.find((e) => e.type === 'conversation.item.truncate');
    expect(truncate, 'a conversation.item.truncate').to.not.equal(undefined);
    const itemId = String(truncate!.event.item_id);
    const played = truncate!.event.audio_end_ms as number;
    // the server had sent all 8 s within about 2 s; what was played is the time from its first audio to the speech
    const expected = rt.speechStartedAt[0]! - rt.firstAudioAt[itemId]!;
    expect(played).to.be.within(expected - 700, expected + 300);
    expect(played).to.be.lessThan(6000);
    // the caller heard about as much of the greeting as was reported played, and none after
    const heardMs = (sink.dominantTones([440]).get(440) ?? 0) * 20;
    expect(heardMs).to.be.within(played - 800, played + 800);
    const af = await endedFlow(db, cid);
    expect(af.end_reason).to.not.equal('error');
    const aicall = (await db('aicalls').where({ customer_id: cid }))[0];
    const tool = await db('aimessages').where({ aicall_id: aicall.id, role: 'tool' }).first();
    expect(tool!.content).to.include('call will end');
  });

  /** A caller saying nothing calls `number` and hears nothing (the AI failed before any audio). */
  async function nothingPlayed(number: string): Promise<void> {
    const sink = await TimedSink.open();
    try {
      const r = await runCall(number, [], sink);
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(sink.voicedTimes().length, 'nothing played').to.equal(0);
    } finally {
      sink.close();
    }
  }

  it('a refused key: the flow ends with the reason and an aicall_realtime_failed event; nothing is played', async () => {
    const { db, cid, number } = await setUp(IDLE_SCRIPT, { engine_key: 'sk-wrong-key' });
    const refused = rt.refused;
    await nothingPlayed(number);
    expect(rt.refused).to.equal(refused + 1);
    const af = await endedFlow(db, cid);
    expect(af.end_reason).to.equal('error');
    expect(af.error).to.include('openai-realtime: the API key was refused (HTTP 401)');
    expect(af.error).to.not.include('sk-wrong-key');
    const aicall = (await db('aicalls').where({ customer_id: cid }))[0];
    const failed = (await eventsFor(p.redis, aicall.id)).find((e) => e.event_type === 'aicall_realtime_failed');
    expect(failed?.data).to.include({ engine_model: 'openai-realtime.gpt-realtime' });
    expect(String(failed?.data.reason)).to.include('API key was refused');
  });

  it('the vendor drops the connection mid-call: the flow ends with the reason and an aicall_realtime_failed event', async () => {
    const { db, cid, number } = await setUp({ greeting: { say: 'Hello there.', ms: 600 }, turn: () => ({ heard: '', reply: { say: '', ms: 0 } }), afterCall: () => null, dropAfterMs: 2000 });
    const sink = await TimedSink.open();
    try {
      const r = await runCall(number, [], sink);
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(sink.voicedTimes().length, 'the greeting was heard').to.be.greaterThan(20);
    } finally {
      sink.close();
    }
    const af = await endedFlow(db, cid);
    expect(af.end_reason).to.equal('error');
    expect(af.error).to.include('openai-realtime: the vendor closed the connection (1011)');
    const aicall = (await db('aicalls').where({ customer_id: cid }))[0];
    const failed = (await eventsFor(p.redis, aicall.id)).find((e) => e.event_type === 'aicall_realtime_failed');
    expect(String(failed?.data.reason)).to.include('closed the connection');
    const said = await db('aimessages').where({ aicall_id: aicall.id, role: 'assistant' }).first();
    expect(said?.content).to.equal('Hello there.');
  });

  it('an engine_url on a private address: refused by the egress policy before any connection', async () => {
    const { db, cid, number } = await setUp(
      { greeting: { say: 'never', ms: 1000 }, turn: () => ({ heard: '', reply: { say: '', ms: 0 } }), afterCall: () => null },
      { engine_url: 'https://10.255.255.1:8443/v1', engine_key: 'sk-own' },
    );
    const started = Date.now();
    await nothingPlayed(number);
    expect(Date.now() - started).to.be.lessThan(15_000);
    const af = await endedFlow(db, cid);
    expect(af.end_reason).to.equal('error');
    expect(af.error).to.include('openai-realtime: the egress policy refused the vendor URL');
    const aicall = (await db('aicalls').where({ customer_id: cid }))[0];
    const failed = (await eventsFor(p.redis, aicall.id)).find((e) => e.event_type === 'aicall_realtime_failed');
    expect(String(failed?.data.reason)).to.include('egress policy refused');
  });
});
