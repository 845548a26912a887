// Real calls for the speech-to-speech tests (test/ai/realtime-*.test.ts): a platform with the real
// BullMQ command bus (outbound calls are originated as control-api asks), an AI and a flow running
// ai_talk, a caller (sipp UAC) or a callee (sipp UAS) that plays speech pcaps and sends what it
// hears to a TimedSink, and the ended activeflow.
import { endedActiveflow } from '../call-ends';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { CommandBus } from '../../core/commands/bus';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { callsRepo } from '../../core/repos/calls';
import { aisRepo } from '../../core/repos/ais';
import { repos } from '../../core/repos';
import { testDb } from '../db';
import { freePort, sippMediaPort } from '../ports';
import { eventsFor, killAllSipp, sipp, startPlatform, until, type Platform, type SippResult } from '../media-app/harness';
import { aiCallerScenario, aiCalleeScenario, speechPcap, TimedSink } from './audio';

type Db = Awaited<ReturnType<typeof testDb>>;
export type Play = { atMs: number; pcap: string };

export interface S2sRig {
  p: Platform;
  bus: CommandBus;
  close(): Promise<void>;
}

export async function startS2sRig(env: Record<string, string>): Promise<S2sRig> {
  const p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', ...env });
  const busRedis = new Redis(process.env.TEST_REDIS_URL!, { maxRetriesPerRequest: 2 });
  const bus = new CommandBus({ redis: busRedis, keyPrefix: p.config.redisKeyPrefix });
  return {
    p,
    bus,
    async close() {
      killAllSipp();
      await bus.close();
      busRedis.disconnect();
      await p.close();
    },
  };
}

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
  const row = await callsRepo(f.db).create({
    customer_id: f.cid,
    flow_id: f.flowId,
    source: { type: 'tel', target: '+15550001111' },
    destination: { type: 'sip', target: `callee@127.0.0.1:${port}` },
    direction: 'outgoing',
    status: 'dialing',
    data: {},
  });
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
