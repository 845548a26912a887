/**
 * kill -9 of a media-app node with calls up, for test/reliability/faults-node.test.ts (bounded) and
 * scripts/soak/faults.ts (long form): sip-server in this process, media-app as a child process
 * (media-app/main.ts), the node sweeper in this process, calls from sipp through sip-server into a
 * flow that answers, records (half the calls) and talks. Returns what was measured; the callers judge.
 */
import { spawn, type ChildProcess, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { repos } from '../../core/repos';
import { EventPublisher, eventStreamKey } from '../../core/events/bus';
import { CommandBus } from '../../core/commands/bus';
import { nodeQueueName } from '../../core/commands/contracts';
import { NodeSweeper, type SweepReport } from '../../core/calls/node-sweep';
import { readWavInfo } from '../../media-engine/audio/wav';
import { portBlock } from '../ports';
import { RtpSink, sipp, startSipServer, uacWaitsForBye, until, sleep, type SippResult } from '../media-app/harness';

const ROOT = path.resolve(__dirname, '../..');
const SECRET = 'node-fault-secret';

export interface NodeFaultOptions {
  db: Knex;
  databaseUrl: string;
  redisUrl: string;
  /** calls up at the kill; half of them are recorded */
  calls: number;
  /** how long the calls run before the kill */
  upMs?: number;
}

export interface NodeFaultResult {
  calls: number;
  /** all callers got a BYE (sipp exit 0) */
  byeAll: boolean;
  sippResults: SippResult[];
  /** ms from SIGKILL to the last caller's BYE being answered (sipp exit) */
  byeMs: number;
  /** ms from SIGKILL to every call row being hangup */
  finalisedMs: number;
  rows: { id: string; status: string; hangup_by: string; hangup_reason: string; mute_direction: string }[];
  hangupEvents: Map<string, number>;
  recordings: { id: string; status: string; file: string; declaredBytes: number; fileBytes: number; durationMs: number; soxSeconds: number }[];
  /** UDP ports the media-app held, and how many of them could be bound after the kill */
  rtpPorts: number;
  rtpPortsFreed: number;
  commands: { id: string; type: string; state: string; reason: string; attempts: number }[];
  /** a command applied before the freeze: its job and its effect */
  appliedBefore: { state: string; attempts: number; mute: string };
  reports: SweepReport[];
  sipDialogsLeft: number;
}

/** UDP ports a process holds (ss -uanp). */
function udpPortsOf(pid: number): number[] {
  const out = execFileSync('ss', ['-uanpH'], { encoding: 'utf8' });
  const ports = new Set<number>();
  for (const line of out.split('\n')) {
    if (!line.includes(`pid=${pid},`)) continue;
    const local = line.trim().split(/\s+/)[3] ?? '';
    const p = Number(local.slice(local.lastIndexOf(':') + 1));
    if (p) ports.add(p);
  }
  return [...ports];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    s.once('error', () => resolve(false));
    s.bind(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** Seconds of audio in a WAV file being written (its size over the header's byte rate); 0 while it has no header. */
function wavSeconds(file: string): number {
  try {
    const b = fs.readFileSync(file);
    return b.length > 44 && b.readUInt32LE(28) > 0 ? (b.length - 44) / b.readUInt32LE(28) : 0;
  } catch {
    return 0;
  }
}

interface MediaAppChild {
  proc: ChildProcess;
  exited: Promise<void>;
}

/** media-app/main.ts as a child process on the sip-server's drachtio port; resolves once it says READY (killed if it never does). */
async function spawnMediaApp(o: NodeFaultOptions, env: { prefix: string; dataDir: string; nodeId: string; drachtioPort: number; rtpMin: number }): Promise<MediaAppChild> {
  const proc = spawn(process.execPath, ['--require', 'tsx/cjs', 'media-app/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: o.databaseUrl,
      REDIS_URL: o.redisUrl,
      REDIS_KEY_PREFIX: env.prefix,
      DATA_DIR: env.dataDir,
      SIP_DOMAIN: 'sip.test',
      JWT_SECRET: 'z'.repeat(40),
      DRACHTIO_HOST: '127.0.0.1',
      DRACHTIO_PORT: String(env.drachtioPort),
      DRACHTIO_SECRET: SECRET,
      MEDIA_APP_NODE_ID: env.nodeId,
      MEDIA_APP_HEARTBEAT_MS: '1500',
      RTP_PORT_MIN: String(env.rtpMin),
      RTP_PORT_MAX: String(env.rtpMin + 199),
      MEDIA_WORKERS: '1',
      MEDIA_APP_READY_LINE: '1',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  try {
    await until(() => out.includes('READY'), 30_000, `media-app ready; output: ${out}`);
  } catch (e) {
    proc.kill('SIGKILL');
    throw e;
  }
  return { proc, exited };
}

/** A customer with a trunk by address and two numbers: the first one's flow records, both talk for minutes. */
async function provision(db: Knex): Promise<{ cid: string; numbers: string[] }> {
  const cid = (await repos(db).customers.create({ email: `nf${Date.now()}${randomBytes(2).toString('hex')}@example.test`, status: 'active', name: 'nf' })).id;
  await trunksRepo(db).create(cid, `nf${randomBytes(4).toString('hex')}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.0/8'] });
  const talk = { type: 'talk', option: { text: 'This is a long announcement that keeps the line busy. '.repeat(30), language: 'en-US' } };
  const numbers: string[] = [];
  for (const record of [true, false]) {
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions(record ? [{ type: 'answer' }, { type: 'recording_start', option: {} }, talk] : [{ type: 'answer' }, talk]),
    } as never);
    const number = `+8997${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    numbers.push(number);
  }
  return { cid, numbers };
}

/** Half the calls (rounded up) to the recorded number, the rest to the other, each sipp waiting for the BYE; resolves once every call is progressing, with its call ids. */
async function callsUp(o: NodeFaultOptions, rig: { cid: string; numbers: string[]; sipPort: number; dataDir: string; sinks: RtpSink[] }) {
  const { db } = o;
  const { cid, sipPort, sinks } = rig;
  const half = [Math.ceil(o.calls / 2), Math.floor(o.calls / 2)];
  const callers = await Promise.all(
    rig.numbers.map(async (n, i) => {
      const sink = await RtpSink.open();
      sinks.push(sink);
      return sipp(
        uacWaitsForBye(`${n}@127.0.0.1:${sipPort}`, 'pbx', sink.port, { byeTimeoutMs: 120_000 }),
        [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', String(half[i]), '-r', '20', '-l', String(half[i]), '-timeout', '150s'],
        { killAfterMs: 160_000 },
      );
    }),
  );
  const up = await until(
    async () => {
      const r = await db('calls').where({ customer_id: cid, status: 'progressing' }).select('id');
      return r.length === o.calls ? r.map((x) => x.id as string) : null;
    },
    30_000 + o.calls * 200,
    `${o.calls} calls up`,
  );
  await until(async () => (await db('recordings').where({ customer_id: cid, status: 'recording' })).length === half[0], 10_000, 'recordings running');
  await sleep(o.upMs ?? 2500);
  // and every recording's file holds more than a second of audio (its flushes come later on a loaded machine)
  await until(
    async () => (await db('recordings').where({ customer_id: cid })).every((r: { filenames: string[] }) => wavSeconds(path.join(rig.dataDir, 'recordings', r.filenames[0]!)) > 1.2),
    15_000,
    'a second of every recording on disk',
  );
  return { callers, up };
}

/**
 * The fault: the node is frozen (SIGSTOP), commands for its calls are queued at once (its heartbeat runs
 * out a few seconds from now), then it is killed with them in its queue. Returns the queued commands and the kill's time.
 */
async function freezeAndKill(node: MediaAppChild, bus: CommandBus, up: string[]): Promise<{ queued: { id: string; type: string }[]; killedAt: number }> {
  node.proc.kill('SIGSTOP');
  const commands = [
    ...up.slice(1, 4).map((callId) => ({ type: 'call.hangup' as const, callId })),
    ...up.slice(4, 7).map((callId) => ({ type: 'call.mute' as const, callId, direction: 'in' as const, on: true })),
    ...up.slice(7, 9).map((callId) => ({ type: 'call.recording_stop' as const, callId })),
  ];
  const sent = await Promise.all(commands.map((c) => bus.toCallOwner(c)));
  const queued = sent.map((s, i) => ({ id: s?.commandId ?? 'not-queued', type: commands[i]!.type }));
  const killedAt = Date.now();
  node.proc.kill('SIGKILL');
  await node.exited;
  return { queued, killedAt };
}

/** Every caller's end (its BYE answered): the results, and the time from the kill to the last one. */
async function byes(callers: { done: Promise<SippResult> }[], killedAt: number): Promise<{ sippResults: SippResult[]; byeMs: number }> {
  const sippResults: SippResult[] = [];
  let byeMs = 0;
  await Promise.all(
    callers.map((c) =>
      c.done.then((r) => {
        byeMs = Math.max(byeMs, Date.now() - killedAt);
        sippResults.push(r);
      }),
    ),
  );
  return { sippResults, byeMs };
}

/** The call_hangup events of the customer on the event stream `stream`, counted per call. */
async function hangupEvents(redis: Redis, stream: string, cid: string): Promise<Map<string, number>> {
  const events = new Map<string, number>();
  for (const [, fields] of (await redis.xrange(stream, '-', '+')) as [string, string[]][]) {
    const e = JSON.parse(fields[fields.indexOf('e') + 1]!);
    if (e.customer_id === cid && e.event_type === 'call_hangup') events.set(e.resource_id, (events.get(e.resource_id) ?? 0) + 1);
  }
  return events;
}

/** Each recording's file as the sweep left it: the header's declared size against the file's, its duration by us and by sox. */
async function recordingsOnDisk(db: Knex, cid: string, dataDir: string): Promise<NodeFaultResult['recordings']> {
  const recordings: NodeFaultResult['recordings'] = [];
  for (const r of await db('recordings').where({ customer_id: cid })) {
    const file = path.join(dataDir, 'recordings', r.filenames[0]);
    const info = readWavInfo(file);
    const declared = fs.readFileSync(file).readUInt32LE(40);
    const soxSeconds = Number(execFileSync('sox', ['--i', '-D', file], { encoding: 'utf8' }).trim());
    recordings.push({ id: r.id, status: r.status, file, declaredBytes: declared, fileBytes: fs.statSync(file).size, durationMs: info.durationMs, soxSeconds });
  }
  return recordings;
}

/** The dead node's queue: each queued command's job, and the command applied before the fault with its call's mute. */
async function commandOutcomes(
  o: { db: Knex; bus: CommandBus; nodeId: string },
  queued: { id: string; type: string }[],
  applied: { commandId: string; callId: string },
): Promise<Pick<NodeFaultResult, 'commands' | 'appliedBefore'>> {
  const q = o.bus.queue(nodeQueueName(o.nodeId));
  const commands: NodeFaultResult['commands'] = [];
  for (const c of queued) {
    const job = await q.getJob(c.id);
    commands.push({ id: c.id, type: c.type, state: job ? await job.getState() : 'missing', reason: job?.failedReason ?? '', attempts: job?.attemptsMade ?? -1 });
  }
  const appliedJob = await q.getJob(applied.commandId);
  const mute = (await o.db('calls').where({ id: applied.callId }).first())!.mute_direction as string;
  return { commands, appliedBefore: { state: appliedJob ? await appliedJob.getState() : 'missing', attempts: appliedJob?.attemptsMade ?? -1, mute } };
}

export async function runNodeFault(o: NodeFaultOptions): Promise<NodeFaultResult> {
  const { db } = o;
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const { sipPort, drachtioPort, stack, drachtio } = await startSipServer(logger, SECRET);
  const prefix = `tnf${process.pid}_${randomBytes(3).toString('hex')}:`;
  const nodeId = `nf-${process.pid}-${randomBytes(2).toString('hex')}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-fault-'));
  // below the kernel's ephemeral ports (32768+), so nothing else can take a freed port before it is checked
  const rtpMin = portBlock('nodeRtp', 200).min;
  const redis = new Redis(o.redisUrl);
  const sweeper = new NodeSweeper({ db, redis, keyPrefix: prefix, events: new EventPublisher(redis, eventStreamKey(prefix)), logger, intervalMs: 250, dataDir });
  const reports: SweepReport[] = [];
  const bus = new CommandBus({ redis, keyPrefix: prefix });
  let node: MediaAppChild | null = null;
  const sinks: RtpSink[] = [];
  try {
    node = await spawnMediaApp(o, { prefix, dataDir, nodeId, drachtioPort, rtpMin });
    sweeper.start((r) => reports.push(r));
    const { cid, numbers } = await provision(db);
    const { callers, up } = await callsUp(o, { cid, numbers, sipPort, dataDir, sinks });
    const ports = udpPortsOf(node.proc.pid!);

    // a command applied before the fault: it must stay applied once
    const mutedId = up[0]!;
    const applied = (await bus.toCallOwner({ type: 'call.mute', callId: mutedId, direction: 'both', on: true }))!;
    await until(async () => (await bus.queue(nodeQueueName(nodeId)).getJobState(applied.commandId)) === 'completed', 10_000, 'mute applied');

    const { queued, killedAt } = await freezeAndKill(node, bus, up);
    const { sippResults, byeMs } = await byes(callers, killedAt);
    const rows = await until(
      async () => {
        const r = await db('calls').where({ customer_id: cid }).select('id', 'status', 'hangup_by', 'hangup_reason', 'mute_direction');
        return r.length === o.calls && r.every((x) => x.status === 'hangup') ? r : null;
      },
      20_000,
      'every call finalised',
    );
    const finalisedMs = Date.now() - killedAt;
    await until(() => reports.some((r) => r.nodeId === nodeId), 20_000, 'sweep report');

    const events = await hangupEvents(redis, eventStreamKey(prefix), cid);
    const recordings = await recordingsOnDisk(db, cid, dataDir);
    let freed = 0;
    for (const p of ports) if (await bindable(p)) freed++;
    return {
      calls: o.calls,
      byeAll: sippResults.every((r) => r.code === 0),
      sippResults,
      byeMs,
      finalisedMs,
      rows,
      hangupEvents: events,
      recordings,
      rtpPorts: ports.length,
      rtpPortsFreed: freed,
      ...(await commandOutcomes({ db, bus, nodeId }, queued, { commandId: applied.commandId, callId: mutedId })),
      reports,
      sipDialogsLeft: drachtio.engine.stats().dialogs,
    };
  } finally {
    if (node && node.proc.exitCode === null && node.proc.signalCode === null) node.proc.kill('SIGKILL');
    for (const s of sinks) s.close();
    await sweeper.stop();
    await bus.close();
    redis.disconnect();
    await drachtio.close();
    await stack.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
