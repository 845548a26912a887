// The call plane (sip-server + media-app, testkit/media-app/harness.ts) and a control-api on the same
// Redis prefix, so REST commands reach the node that owns the call; plus audio helpers.
import { execFileSync } from 'node:child_process';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../api';
import { closeCommandBus } from '../../control-api/calls/bus';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { killAllSipp, RtpSink, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../media-app/harness';
import { truncateAll } from '../db';
import { loopbackTrunk } from '../trunks';
import { eventStreamKey } from '../../core/events/bus';

export interface Stack {
  p: Platform;
  t: TestApp;
  close(): Promise<void>;
}

/** `mediaServer`: the node's media backend (startPlatform's). */
export async function startStack(env: Record<string, string> = {}, opts: { mediaServer?: 'embedded' | 'fsmrf' } = {}): Promise<Stack> {
  const p = await startPlatform(env, opts);
  const t = await buildTestApp({ env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir, ...env } });
  return {
    p,
    t,
    async close() {
      await closeCommandBus(t.ctx);
      await t.close();
      await p.close();
    },
  };
}

export function api(t: TestApp, f: Fixture) {
  const q = { accesskey: f.accesskey };
  return {
    get: (path: string) => request(t.app).get(`/v1.0${path}`).query(q),
    post: (path: string, body?: object) => (body === undefined ? request(t.app).post(`/v1.0${path}`).query(q) : request(t.app).post(`/v1.0${path}`).query(q).send(body)),
    del: (path: string) => request(t.app).delete(`/v1.0${path}`).query(q),
  };
}

let numberSeq = 0;

/** A customer whose trunk (127.0.0.1) calls a virtual number running `actions`; returns the number. */
export async function inboundSetup(s: Stack, actions: unknown[]): Promise<{ f: Fixture; number: string }> {
  return inboundSetupFor(s, await createFixture(s.t.ctx), actions);
}

/** The same for an existing customer (another trunk and number). */
export async function inboundSetupFor(s: Stack, f: Fixture, actions: unknown[]): Promise<{ f: Fixture; number: string }> {
  const db = s.t.ctx.db;
  await loopbackTrunk(db, f.customer.id, `sp${process.pid}${++numberSeq}${Date.now() % 100000}`);
  const flow = await flowsRepo(db).create({ customer_id: f.customer.id, actions: parseActions(actions) } as never);
  const number = `+8991${String(process.pid % 10000).padStart(4, '0')}${String(++numberSeq).padStart(3, '0')}`;
  await numbersRepo(db).create({ customer_id: f.customer.id, number, type: 'virtual', call_flow_id: flow.id });
  return { f, number };
}

/** The customer's one call, once it is progressing. */
export async function progressingCall(s: Stack, customerId: string): Promise<{ id: string }> {
  return until(
    async () => {
      const rows = await s.t.ctx.db('calls').where({ customer_id: customerId, status: 'progressing' });
      return rows[0] ?? null;
    },
    15_000,
    'a progressing call',
  );
}

/**
 * Voiced runs of 20 ms levels: packets above `threshold`, runs closer than `mergeGap` packets joined.
 * Returns [start, length] in packets.
 */
export function voicedRuns(levels: number[], threshold = 300, mergeGap = 12): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  let start = -1;
  let lastVoiced = -1;
  for (let i = 0; i < levels.length; i++) {
    if (levels[i]! <= threshold) continue;
    if (start >= 0 && i - lastVoiced > mergeGap) {
      runs.push([start, lastVoiced - start + 1]);
      start = -1;
    }
    if (start < 0) start = i;
    lastVoiced = i;
  }
  if (start >= 0) runs.push([start, lastVoiced - start + 1]);
  return runs;
}

/** 20 ms mean-|sample| levels of text spoken by espeak-ng at 8 kHz (the embedded provider's voice). */
export function espeakLevels(text: string): number[] {
  const wav = execFileSync('espeak-ng', ['-v', 'en-us', '-s', '165', '--stdout', text]);
  const raw = execFileSync('sox', ['-t', 'wav', '-', '-r', '8000', '-b', '16', '-c', '1', '-e', 'signed-integer', '-t', 'raw', '-'], { input: wav });
  const out: number[] = [];
  for (let o = 0; o + 320 <= raw.length; o += 320) {
    let sum = 0;
    for (let i = 0; i < 160; i++) sum += Math.abs(raw.readInt16LE(o + i * 2));
    out.push(sum / 160);
  }
  return out;
}

/** Events of some types whose data matches `match`, from the platform's event stream. */
export async function eventsWhere(
  s: Stack,
  types: string[],
  match: (data: Record<string, unknown>) => boolean,
): Promise<Array<{ event_type: string; resource_id: string; data: Record<string, unknown> }>> {
  const entries = (await s.p.redis.xrange(eventStreamKey(s.p.config.redisKeyPrefix), '-', '+')) as [string, string[]][];
  const out: Array<{ event_type: string; resource_id: string; data: Record<string, unknown> }> = [];
  for (const [, fields] of entries) {
    const i = fields.indexOf('e');
    if (i < 0) continue;
    const e = JSON.parse(fields[i + 1]!);
    if (types.includes(e.event_type) && match(e.data)) out.push(e);
  }
  return out;
}

/** A stack on a clean database, for a suite's before hook. */
export async function freshStack(env: Record<string, string> = {}, opts: { mediaServer?: 'embedded' | 'fsmrf' } = {}): Promise<Stack> {
  await truncateAll();
  return startStack(env, opts);
}

/** A suite's stack: freshStack in its before hook (handed to `set`), closeStack in its after hook. */
export function useStack(set: (s: Stack) => void, env: Record<string, string> = {}, opts: { mediaServer?: 'embedded' | 'fsmrf' } = {}): void {
  let s: Stack | undefined;
  before(async () => set((s = await freshStack(env, opts))));
  after(() => closeStack(s));
}

/** A suite's after hook: no sipp left behind, the stack closed. */
export async function closeStack(s: Stack | undefined): Promise<void> {
  killAllSipp();
  await s?.close();
}

/** sipp, as the customer's trunk, calls `number` and waits for the platform's BYE; audio to a sink. */
export async function callNumber(s: Stack, number: string, from: string, killAfterMs: number): Promise<{ sink: RtpSink; caller: ReturnType<typeof sipp> }> {
  const sink = await RtpSink.open();
  const caller = sipp(uacWaitsForBye(`${number}@127.0.0.1:${s.p.sipPort}`, from, sink.port), [`127.0.0.1:${s.p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs });
  return { sink, caller };
}

/**
 * A live conference of `f`'s (POST /conferences, progressing) and one participant in it: sipp calls a
 * number whose flow joins it, `from` its caller id, its audio to `sink`; resolves once the participant
 * is joined. The caller's `done` and the sink are the test's to await and close.
 */
export async function conferenceWithCaller(s: Stack, f: Fixture, name: string, from: string, killAfterMs: number): Promise<{ confId: string; sink: RtpSink; caller: ReturnType<typeof sipp> }> {
  const a = api(s.t, f);
  const conf = await a.post('/conferences', { type: 'conference', name, detail: '', data: {}, timeout: 0 });
  if (conf.status !== 200 && conf.status !== 201) throw new Error(`POST /conferences: ${conf.status} ${JSON.stringify(conf.body)}`);
  const confId = conf.body.id as string;
  await until(async () => (await a.get(`/conferences/${confId}`)).body.status === 'progressing', 10_000, 'conference progressing');
  const { number } = await inboundSetupFor(s, f, [{ type: 'answer' }, { type: 'conference_join', option: { conference_id: confId } }, { type: 'hangup' }]);
  const { sink, caller } = await callNumber(s, number, from, killAfterMs);
  try {
    await until(async () => (await s.t.ctx.db('conferencecalls').where({ conference_id: confId, status: 'joined' }).first()) ?? null, 15_000, 'participant joined');
  } catch (err) {
    caller.kill();
    await caller.done.catch(() => undefined);
    sink.close();
    throw err;
  }
  return { confId, sink, caller };
}
