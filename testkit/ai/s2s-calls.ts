// Real calls for the speech-to-speech tests (test/ai/realtime-*.test.ts): a platform with the real
// BullMQ command bus (outbound calls are originated as control-api asks), an AI and a flow running
// ai_talk, a caller (sipp UAC) or a callee (sipp UAS) that plays speech pcaps and sends what it
// hears to a TimedSink, and the ended activeflow. Below, the calls every vendor suite makes against
// its stand-in (an order call, barge-in, a refused key, a private URL); each suite checks its wire.
import { expect } from 'chai';
import { endedActiveflow } from '../call-ends';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { aisRepo } from '../../core/repos/ais';
import { repos } from '../../core/repos';
import { testDb, truncateAll } from '../db';
import { freePort, sippMediaPort } from '../ports';
import { eventsFor, killAllSipp, sipp, startPlatform, until, type Platform, type SippResult } from '../media-app/harness';
import { aiCallerScenario, aiCalleeScenario, speechPcap, TimedSink } from './audio';
import { startRealtimeServer, type RealtimeScript, type RealtimeServer } from './realtime-server';
import { dialingCall, startBusPlatform, type BusPlatform } from '../media-app/originate';

type Db = Awaited<ReturnType<typeof testDb>>;
export type Play = { atMs: number; pcap: string };

export type S2sRig = BusPlatform;

export const startS2sRig = startBusPlatform;

let seq = 0;

/** A customer, an AI (`ai` over the defaults) and a flow answer → ai_talk → hangup. */
export async function aiFlow(ai: Record<string, unknown>): Promise<{ db: Db; cid: string; flowId: string }> {
  const db = await testDb();
  const cid = (await repos(db).customers.create({ email: `s2s${Date.now()}${Math.random()}@example.test`, status: 'active', name: 's2s' })).id;
  const row = await aisRepo(db).create(cid, {
    name: 's2s',
    init_prompt: 'You take orders for ${shop}.',
    tool_names: ['all'],
    parameter: { shop: 'Acme Bikes' },
    vad_config: { stop_secs: 0.6 },
    ...ai,
  } as Parameters<ReturnType<typeof aisRepo>['create']>[1]);
  const flow = await flowsRepo(db).create({
    customer_id: cid,
    actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: row.id, duration: 40 } }, { type: 'hangup' }]),
  });
  return { db, cid, flowId: flow.id };
}

/** sipp calls a number of the flow; plays are offsets after its ACK. */
export async function inboundCall(rig: S2sRig, f: { db: Db; cid: string; flowId: string }, plays: Play[], sink: TimedSink): Promise<SippResult> {
  await trunksRepo(f.db).create(f.cid, `trs2s${Date.now()}${++seq}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  const number = `+8992300${String(++seq).padStart(5, '0')}`;
  await numbersRepo(f.db).create({ customer_id: f.cid, number, type: 'virtual', call_flow_id: f.flowId });
  const scenario = aiCallerScenario(`${number}@127.0.0.1:${rig.p.sipPort}`, sink.port, plays);
  return sipp(scenario, [`127.0.0.1:${rig.p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 }).done;
}

/** The platform calls sipp (originate, as POST /calls does) and runs the flow when it answers; plays are offsets after the ACK. */
export async function outboundCall(rig: S2sRig, f: { db: Db; cid: string; flowId: string }, plays: Play[], sink: TimedSink): Promise<SippResult> {
  const port = await freePort();
  const row = await dialingCall(f.db, f.cid, f.flowId, `callee@127.0.0.1:${port}`, {});
  const callee = sipp(aiCalleeScenario(sink.port, plays), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort()), '-timeout', '60s'], {
    killAfterMs: 70_000,
  });
  await rig.bus.originate([row.id], f.cid);
  return callee.done;
}

/** The activeflow of the customer's call, once the call hung up and the flow ended. */
export async function endedFlow(db: Db, cid: string): Promise<{ variables: Record<string, string>; end_reason: string; error: string | null }> {
  const call = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 15_000, 'call hangup');
  return endedActiveflow(call.activeflow_id);
}

/** The aicall's messages in order. */
export async function aimessagesOf(db: Db, cid: string) {
  const aicall = await until(async () => (await db('aicalls').where({ customer_id: cid, status: 'terminated' }))[0], 10_000, 'aicall terminated');
  return db('aimessages').where({ aicall_id: aicall.id }).orderBy('tm_create');
}

/**
 * A call to an AI that must fail before any audio (a refused key, a refused URL): sipp calls in, hears
 * nothing, and the call ends. Returns the ended activeflow's error and the aicall_realtime_failed event.
 */
export async function failedBeforeAudio(rig: S2sRig, ai: Record<string, unknown>): Promise<{ error: string; endReason: string; event: Record<string, unknown> | undefined }> {
  const f = await aiFlow(ai);
  const sink = await TimedSink.open();
  try {
    const r = await inboundCall(rig, f, [], sink);
    if (r.code !== 0) throw new Error(`the caller's call failed: ${r.errors}${r.messages}`);
    if (sink.voicedTimes().length) throw new Error(`the caller heard ${sink.voicedTimes().length} voiced packets; nothing should play`);
  } finally {
    sink.close();
  }
  const af = await endedFlow(f.db, f.cid);
  const aicall = (await f.db('aicalls').where({ customer_id: f.cid }))[0];
  const event = aicall ? (await eventsFor(rig.p.redis, aicall.id)).find((e) => e.event_type === 'aicall_realtime_failed')?.data : undefined;
  return { error: af.error ?? '', endReason: af.end_reason, event };
}

/**
 * Mocha hooks: the caller's two turns of the speech-to-speech suites spoken into pcaps in a temporary
 * folder (`prefix`) before the suite, removed after it; `ms` is where each one's speech ends.
 */
export function useCallerTurns(prefix: string): { q1: { file: string; ms: number }; q2: { file: string; ms: number } } {
  const q1 = { file: '', ms: 0 };
  const q2 = { file: '', ms: 0 };
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    q1.file = path.join(dir, 'q1.pcap');
    q1.ms = speechPcap('My order number is forty two.', q1.file);
    q2.file = path.join(dir, 'q2.pcap');
    q2.ms = speechPcap('That is all, thank you.', q2.file);
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  return { q1, q2 };
}

/** What the vendor suites need of a speech-to-speech stand-in (deepgram-agent-server, gemini-live-server). */
export interface S2sStandIn {
  url: string;
  script: RealtimeScript;
  received: unknown[];
  /** when each speech_started was sent, and when each response's first audio went out */
  speechStartedAt: number[];
  firstAudioAt: number[];
  /** ms of caller audio received */
  appendedMs: number;
  /** connections refused for their key */
  refused: number;
  close(): Promise<void>;
}

/** A script that never speaks: the calls that must fail before any audio. */
export const IDLE_SCRIPT: RealtimeScript = { greeting: { say: 'never', ms: 1000 }, turn: () => ({ heard: '', reply: { say: '', ms: 0 } }), afterCall: () => null };

export interface S2sVendorSuite<S extends S2sStandIn> {
  /** set once the suite's before hook ran */
  rig: S2sRig;
  vendor: S;
  q1: { file: string; ms: number };
  q2: { file: string; ms: number };
  /** gives the stand-in `script` and forgets what it recorded */
  use(script: RealtimeScript): void;
}

/**
 * Mocha hooks of a vendor suite: the caller's turns (useCallerTurns), the stand-in (`start`, idle) and a
 * rig whose environment points at it (`env`), started before the suite's tests and closed after them.
 */
export function useS2sVendor<S extends S2sStandIn>(prefix: string, start: (script: RealtimeScript) => Promise<S>, env: (vendor: S) => Record<string, string>): S2sVendorSuite<S> {
  const { q1, q2 } = useCallerTurns(prefix);
  const suite = {
    q1,
    q2,
    use(script: RealtimeScript) {
      const v = suite.vendor;
      v.script = script;
      v.received.length = 0;
      v.speechStartedAt.length = 0;
      v.firstAudioAt.length = 0;
      v.appendedMs = 0;
    },
  } as S2sVendorSuite<S>;
  before(async () => {
    await truncateAll();
    suite.vendor = await start(IDLE_SCRIPT);
    suite.rig = await startS2sRig(env(suite.vendor));
  });
  after(async () => {
    await suite.rig?.close();
    await suite.vendor?.close();
  });
  return suite;
}

export interface RealtimeStack {
  p: Platform;
  rt: RealtimeServer;
  /** a scratch folder for the suite's pcaps, removed after it */
  dir: string;
}

/**
 * Mocha hooks of the suites that call a plain platform (no command bus) on OpenAI Realtime's stand-in:
 * a scratch folder (named from `prefix`), the stand-in (`key`, `script`) and a platform that trusts its
 * certificate and may reach loopback, with `env(rt)` besides; `ready` receives them once up, before the
 * suite's own hooks.
 */
export function useRealtimeStack(prefix: string, key: string, script: RealtimeScript, env: (rt: RealtimeServer) => Record<string, string>, ready: (s: RealtimeStack) => void): void {
  let s: Partial<RealtimeStack> = {};
  before(async () => {
    await truncateAll();
    s.dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    s.rt = await startRealtimeServer(key, script);
    s.p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', OPENAI_REALTIME_CA_FILE: s.rt.cert.certPath, ...env(s.rt) });
    ready(s as RealtimeStack);
  });
  after(async () => {
    killAllSipp();
    await s.p?.close();
    await s.rt?.close();
    if (s.dir) fs.rmSync(s.dir, { recursive: true, force: true });
    s = {};
  });
}

/** The script of the order call: a greeting (440 Hz), the caller's order number (set_variables, answered at 660 Hz), then `stop` ends it. */
export function orderScript(greeting: string, stop: string): RealtimeScript {
  return {
    greeting: { say: greeting, ms: 1200, hz: 440 },
    turn: (n) =>
      n === 0
        ? { heard: 'my order number is forty two', reply: { call: 'set_variables', arguments: { variables: { order: '42' } } } }
        : { heard: 'that is all thank you', reply: { call: stop, arguments: {} } },
    afterCall: (name) => (name === 'set_variables' ? { say: 'Noted, order forty two.', ms: 1000, hz: 660 } : null),
  };
}

/**
 * The platform calls out to the flow `f` running orderScript; the callee says its two turns. The greeting
 * comes first, within 1 s of the call's first RTP packet, and the answer after; the flow ends with the
 * order set. What the vendor was told is the suite's to check.
 */
export async function orderCall(suite: S2sVendorSuite<S2sStandIn>, f: { db: Db; cid: string; flowId: string }): Promise<void> {
  const { q1, q2 } = suite;
  const sink = await TimedSink.open();
  try {
    const r = await outboundCall(
      suite.rig,
      f,
      [
        { atMs: 2500, pcap: q1.file },
        { atMs: 2500 + q1.ms + 3000, pcap: q2.file },
      ],
      sink,
    );
    expect(r.code, r.errors + r.messages).to.equal(0);
    const voiced = sink.voicedTimes();
    expect(voiced.length, 'audio heard').to.be.greaterThan(0);
    expect(voiced[0]! - sink.packets[0]!.at, 'greeting after the media started').to.be.lessThan(1000);
    const tones = sink.dominantTones([440, 660]);
    expect(tones.get(440) ?? 0, 'greeting packets').to.be.within(40, 70);
    expect(tones.get(660) ?? 0, 'answer packets').to.be.within(35, 60);
  } finally {
    sink.close();
  }
  const af = await endedFlow(f.db, f.cid);
  expect(af.variables).to.include({ order: '42' });
  expect(af.end_reason).to.not.equal('error');
  expect(suite.vendor.appendedMs, 'caller audio streamed').to.be.greaterThan(5000);
}

/** The order call's transcripts as stored: the greeting and the answer, the caller's two turns, the two tool calls. */
export async function expectOrderTranscripts(f: { db: Db; cid: string }, stop: string): Promise<void> {
  const msgs = await aimessagesOf(f.db, f.cid);
  expect(msgs.filter((m) => m.role === 'assistant' && m.content).map((m) => m.content)).to.deep.equal(['Hello, Acme Bikes, how can I help?', 'Noted, order forty two.']);
  const heard = msgs.filter((m) => m.role === 'user');
  expect(heard.map((m) => m.content)).to.deep.equal(['my order number is forty two', 'that is all thank you']);
  expect(heard[0]!.direction).to.equal('incoming');
  expect(msgs.filter((m) => (m.tool_calls as unknown[])?.length).map((m) => (m.tool_calls as { function: { name: string } }[])[0]!.function.name)).to.deep.equal(['set_variables', stop]);
}

/**
 * Barge-in: the caller speaks over an 8 s greeting (the stand-in sends it at once); the caller hears the
 * greeting up to its speech and none of what was queued; the flow ends without an error.
 */
export async function bargeInCall(suite: S2sVendorSuite<S2sStandIn>, model: string): Promise<{ db: Db; cid: string }> {
  suite.use({
    greeting: { say: 'This is a very long greeting that goes on and on.', ms: 8000, hz: 440 },
    turn: () => ({ heard: 'my order number is forty two', reply: { call: 'stop_flow', arguments: {} } }),
    afterCall: () => null,
  });
  const f = await aiFlow({ engine_model: model });
  const sink = await TimedSink.open();
  try {
    const r = await inboundCall(suite.rig, f, [{ atMs: 2500, pcap: suite.q1.file }], sink);
    expect(r.code, r.errors + r.messages).to.equal(0);
  } finally {
    sink.close();
  }
  // what was played is the time from the stand-in's first audio to the caller's speech
  const played = suite.vendor.speechStartedAt[0]! - suite.vendor.firstAudioAt[0]!;
  expect(played).to.be.within(1000, 6000);
  const heardMs = (sink.dominantTones([440]).get(440) ?? 0) * 20;
  expect(heardMs, 'the greeting heard up to the barge-in, none of what was queued').to.be.within(played - 800, played + 800);
  const af = await endedFlow(f.db, f.cid);
  expect(af.end_reason).to.not.equal('error');
  return f;
}

/** A call with a key the stand-in refuses: counted there, the flow ends with `reason` (the key not in it) and an aicall_realtime_failed event. */
export async function refusedKeyCall(suite: S2sVendorSuite<S2sStandIn>, model: string, key: string, reason: string): Promise<void> {
  suite.use(IDLE_SCRIPT);
  const refused = suite.vendor.refused;
  const r = await failedBeforeAudio(suite.rig, { engine_model: model, engine_key: key });
  expect(suite.vendor.refused).to.equal(refused + 1);
  expect(r.endReason).to.equal('error');
  expect(r.error).to.include(reason);
  expect(r.error).to.not.include(key.slice(0, 12));
  expect(r.event).to.include({ engine_model: model });
  expect(String(r.event?.reason)).to.include('API key was refused');
}

/** A call whose engine_url is a private address: the egress policy refuses it before any connection (`vendor`: the engine's name in the error). */
export async function privateUrlCall(suite: S2sVendorSuite<S2sStandIn>, model: string, vendor: string): Promise<void> {
  suite.use(IDLE_SCRIPT);
  const started = Date.now();
  const r = await failedBeforeAudio(suite.rig, { engine_model: model, engine_url: 'https://10.255.255.1:8443', engine_key: `own-${vendor}-key` });
  expect(Date.now() - started, 'no wait for a connection to the private address').to.be.lessThan(15_000);
  expect(r.endReason).to.equal('error');
  expect(r.error).to.include(`${vendor}: the egress policy refused the vendor URL`);
  expect(String(r.event?.reason)).to.include('egress policy refused');
}

/**
 * The order call's answer to the caller's first turn ('Noted, order forty two.', after its tool call):
 * a reply with its stages, timed from the end of the caller's speech as the vendor's events place it:
 * no end_of_turn_wait_ms (Gemini and Deepgram do not say when they decided), the model's first audio at
 * least `minModelMs` after it, its first audio out after that, both within 5 s.
 */
export async function expectAnswerStages(f: { db: Db; cid: string }, minModelMs: number): Promise<void> {
  const msgs = await aimessagesOf(f.db, f.cid);
  const latencyOf = (m: (typeof msgs)[number]) => (m.metadata as { latency?: Record<string, unknown> } | null)?.latency;
  const shown = JSON.stringify(msgs.map((m) => [m.role, m.content, latencyOf(m)]));
  const answer = msgs.find((m) => m.role === 'assistant' && m.content === 'Noted, order forty two.');
  const latency = answer && latencyOf(answer);
  expect(latency, shown).to.be.an('object');
  expect(latency, shown).to.include({ end_of_turn_wait_ms: null, interrupted: false });
  const model = latency!.model_first_audio_ms as number;
  expect(model, shown).to.be.a('number').and.at.least(minModelMs).and.below(5000);
  expect(latency!.first_rtp_ms, shown).to.be.a('number').and.at.least(model).and.below(5000);
}
