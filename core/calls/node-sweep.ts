/**
 * The node sweeper: when a media-app node dies without stopping (kill -9, a crash, a lost machine),
 * somebody else must finish its records. Every node keeps a heartbeat (nodeAliveKey, 3 periods of
 * TTL) and the set of calls it owns (node-keys.ts). A sweeper (control-api runs one; several copies
 * take turns through a lock) looks at the nodes that own calls; for each whose heartbeat expired it:
 *
 *  - finalises each call: status hangup through the guarded repository transition (a call up goes
 *    through terminating first, so hangup_by is local: the platform ended it), call_hangup published
 *    once; a call the node already ended is left alone;
 *  - ends the call's running activeflows (end_reason call_hangup) and its recordings (status ended,
 *    the WAV header's sizes fixed up to the audio really on disk when the file is reachable here);
 *  - fails every command still queued to the node (its BullMQ queue): they were about calls and
 *    resources that lived on that node, so none is re-routed; a command the node was running when
 *    it died is failed too (never run a second time). Shared-queue commands (originate, activeflow
 *    start) are BullMQ's business: another node gets them again, and their claims keep them single.
 *
 * The SIP side (BYE to the callers) is not done here: sip-server hangs up an application's dialogs
 * when its connection drops (sip-server/drachtio/README.md), within a second of the kill.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Knex } from '../db/knex';
import type { EventPublisher } from '../events/bus';
import { clock } from '../clock';
import { EMPTY_UUID } from '../ids';
import { callNodeKey, nodeAliveKey, nodeQueueName } from '../commands/contracts';
import { callJson, callsRepo } from '../repos/calls';
import { activeflowsRepo } from '../repos/activeflows';
import { MEDIA_NODES_KEY, nodeCallsKey, nodeSweepLockKey } from './node-keys';
import { sweepResources, type ResourceSweepReport } from './resource-sweep';
import { chargeEndedCall } from '../billing/call-end';
import { recordingsDir } from '../data-dirs';

export interface NodeSweeperOptions {
  db: Knex;
  /** A connection without its own keyPrefix (keys are prefixed here, as everywhere else). */
  redis: Redis;
  keyPrefix: string;
  events: EventPublisher;
  logger: Logger;
  /** How often to look for dead nodes (default 2 s). */
  intervalMs?: number;
  /** After the Redis connection comes back, judge no node for this long (default 4 s: heartbeats resume first). */
  graceMs?: number;
  /** DATA_DIR: recordings of this machine are under DATA_DIR/recordings. */
  dataDir?: string;
}

export interface SweepReport {
  nodeId: string;
  calls: string[];
  recordings: string[];
  activeflows: number;
  /** Ids of the commands (BullMQ job ids) failed because their node was gone. */
  commandsFailed: string[];
  /** Conferences, queuecalls, groupcalls, transfers, speakings, transcribes, AI calls (resource-sweep.ts). */
  resources?: ResourceSweepReport;
}

const RECORDING_LIVE = ['initiating', 'recording', 'stopping'];

export class NodeSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;
  private graceUntil = 0;
  private offReady = () => {};

  constructor(private readonly opts: NodeSweeperOptions) {}

  start(onSweep?: (r: SweepReport) => void): void {
    // Redis back after an outage: every heartbeat may have lapsed meanwhile while the nodes are fine;
    // they beat again within a period, so nobody is judged until then
    const onReady = () => (this.graceUntil = Date.now() + (this.opts.graceMs ?? 4000));
    this.opts.redis.on('ready', onReady);
    this.offReady = () => this.opts.redis.off('ready', onReady);
    const tick = () => {
      if (this.stopped || this.running || Date.now() < this.graceUntil) return;
      this.running = this.tick()
        .then((rs) => rs.forEach((r) => onSweep?.(r)))
        .catch((err: Error) => this.opts.logger.warn({ err: err.message }, 'node sweep failed'))
        .finally(() => (this.running = null));
    };
    this.timer = setInterval(tick, this.opts.intervalMs ?? 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.offReady();
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private key(k: string): string {
    return this.opts.keyPrefix + k;
  }

  /** Sweeps every node whose heartbeat expired (one pass). */
  async tick(): Promise<SweepReport[]> {
    const { redis } = this.opts;
    const reports: SweepReport[] = [];
    for (const nodeId of await redis.smembers(this.key(MEDIA_NODES_KEY))) {
      if (this.stopped) break;
      if (await redis.exists(this.key(nodeAliveKey(nodeId)))) continue;
      const lock = await redis.set(this.key(nodeSweepLockKey(nodeId)), String(process.pid), 'PX', 120_000, 'NX');
      if (lock !== 'OK') continue; // another sweeper has it
      try {
        reports.push(await this.sweepNode(nodeId));
      } finally {
        await redis.del(this.key(nodeSweepLockKey(nodeId)));
      }
    }
    return reports;
  }

  /** Finalises what a dead node left (call it only for a node whose heartbeat expired). */
  async sweepNode(nodeId: string): Promise<SweepReport> {
    const { db, redis, logger } = this.opts;
    const fromRedis = await redis.smembers(this.key(nodeCallsKey(nodeId)));
    const fromDb = (await db('calls').where({ node_id: nodeId }).whereNot({ status: 'hangup' }).pluck('id')) as string[];
    const ids = [...new Set([...fromRedis, ...fromDb])];
    const report: SweepReport = { nodeId, calls: [], recordings: [], activeflows: 0, commandsFailed: [] };
    // records first, the dead node's queue after: its commands cannot be applied by anyone (the node is
    // gone), and failing them starts a BullMQ worker, which on a loaded machine takes seconds
    for (const id of ids) if (await this.finaliseCall(id)) report.calls.push(id);
    if (ids.length) {
      report.recordings = await this.endRecordings(ids);
      report.activeflows = await this.endActiveflows(ids);
    }
    report.resources = await sweepResources({ db, redis, keyPrefix: this.opts.keyPrefix, events: this.opts.events, logger }, nodeId, ids);
    report.commandsFailed = await this.failQueued(nodeId);
    await redis.srem(this.key(nodeCallsKey(nodeId)), ...(fromRedis.length ? fromRedis : ['-']));
    await redis.del(...(ids.length ? ids.map((id) => this.key(callNodeKey(id))) : [this.key('-')]));
    // a node that came back (same id) keeps its entry; otherwise it has nothing left to sweep
    if (!(await redis.exists(this.key(nodeAliveKey(nodeId)))) && (await redis.scard(this.key(nodeCallsKey(nodeId)))) === 0) {
      await redis.srem(this.key(MEDIA_NODES_KEY), nodeId);
    }
    const res = report.resources;
    const others = Object.fromEntries(
      Object.entries(res)
        .filter(([, v]) => v.length)
        .map(([k, v]) => [k, v.length]),
    );
    const found = report.calls.length + report.recordings.length + report.commandsFailed.length + Object.keys(others).length;
    logger[found ? 'warn' : 'debug'](
      { node: nodeId, calls: report.calls.length, recordings: report.recordings.length, commands_failed: report.commandsFailed.length, ...others },
      'media-app node gone: swept',
    );
    return report;
  }

  /** Ends one call; true when this sweep wrote its hangup. */
  private async finaliseCall(id: string): Promise<boolean> {
    const repo = callsRepo(this.opts.db);
    const row = await repo.get(id);
    if (!row || row.status === 'hangup') return false;
    if (row.status === 'progressing') {
      const t = await repo.transition(id, 'terminating');
      if (t.changed && t.call) await this.publish('call_terminating', t.call);
    }
    const t = await repo.hangup(id, 'failure', [chargeEndedCall]);
    if (!t.changed || !t.call) return false;
    await this.publish('call_hangup', t.call);
    return true;
  }

  private async publish(type: string, row: Parameters<typeof callJson>[0]): Promise<void> {
    await this.opts.events.publish(type, row.customer_id, row.id, callJson(row)).catch((err: Error) => this.opts.logger.warn({ err: err.message, call: row.id, type }, 'event publish failed'));
  }

  private async endRecordings(callIds: string[]): Promise<string[]> {
    const { db } = this.opts;
    const rows = (await db('recordings').where({ reference_type: 'call' }).whereIn('reference_id', callIds).whereIn('status', RECORDING_LIVE)) as {
      id: string;
      reference_id: string;
      filenames: string[] | null;
    }[];
    const ended: string[] = [];
    for (const r of rows) {
      if (this.opts.dataDir) for (const f of r.filenames ?? []) repairWav(path.join(recordingsDir(this.opts.dataDir), path.basename(f)));
      const now = clock.now();
      const n = await db('recordings').where({ id: r.id }).whereIn('status', RECORDING_LIVE).update({ status: 'ended', tm_end: now, tm_update: now });
      await db('calls').where({ id: r.reference_id, recording_id: r.id }).update({ recording_id: EMPTY_UUID, tm_update: now });
      if (n) ended.push(r.id);
    }
    return ended;
  }

  private async endActiveflows(callIds: string[]): Promise<number> {
    const ids = (await this.opts.db('activeflows').where({ reference_type: 'call', status: 'running' }).whereIn('reference_id', callIds).pluck('id')) as string[];
    const repo = activeflowsRepo(this.opts.db);
    for (const id of ids) await repo.endOrphan(id, 'call_hangup', 'media-app node lost');
    return ids.length;
  }

  /**
   * Fails what is queued to the dead node's own queue. A temporary worker takes each job and fails it
   * without retry; the jobs the node was running when it died lose their lock with it, and are failed
   * as stalled (maxStalledCount 0) rather than run again.
   */
  private async failQueued(nodeId: string): Promise<string[]> {
    const prefix = `${this.opts.keyPrefix}bull`;
    const name = nodeQueueName(nodeId);
    const queue = new Queue(name, { connection: this.opts.redis, prefix });
    queue.on('error', () => undefined);
    const pending = async () => {
      const c = await queue.getJobCounts('active', 'wait', 'delayed', 'prioritized', 'waiting-children');
      return Object.values(c).reduce((a, b) => a + b, 0);
    };
    const failed: string[] = [];
    let worker: Worker | null = null;
    let conn: Redis | null = null;
    try {
      if ((await pending()) === 0) return failed;
      for (const job of await queue.getJobs(['active'])) {
        await this.opts.redis.del(`${prefix}:${name}:${job.id}:lock`);
        failed.push(String(job.id));
      }
      for (const job of await queue.getJobs(['delayed'])) await job.promote().catch(() => undefined);
      if (await queue.isPaused()) await queue.resume();
      const why = `media-app node ${nodeId} is gone: its calls were ended, the command was not applied`;
      worker = new Worker(
        name,
        async (job) => {
          failed.push(String(job.id));
          throw new UnrecoverableError(why);
        },
        { connection: (conn = this.opts.redis.duplicate({ maxRetriesPerRequest: null })), prefix, concurrency: 50, stalledInterval: 250, maxStalledCount: 0 },
      );
      worker.on('error', () => undefined);
      const end = Date.now() + 15_000;
      while ((await pending()) > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      // what the temporary worker could not fail in that time is said, with where it sits (never silently left)
      if ((await pending()) > 0) {
        const counts = await queue.getJobCounts('active', 'wait', 'delayed', 'prioritized', 'waiting-children');
        this.opts.logger.warn({ node_id: nodeId, counts }, 'node sweep: commands still queued to the dead node after 15 s');
      }
    } finally {
      if (worker) await worker.close().catch(() => undefined);
      conn?.disconnect();
      await queue.close().catch(() => undefined);
    }
    return [...new Set(failed)];
  }
}

/**
 * Makes a WAV cut short by a crash agree with itself: the RIFF and data sizes are set to the whole
 * sample frames on disk (the recorder rewrites them each second, so at most the last second is
 * outside them). Files that are not plain RIFF/WAVE with the data chunk last are left alone.
 */
export function repairWav(file: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r+');
  } catch {
    return false;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const head = Buffer.alloc(Math.min(size, 4096));
    fs.readSync(fd, head, 0, head.length, 0);
    if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') return false;
    let pos = 12;
    let blockAlign = 2;
    while (pos + 8 <= head.length) {
      const id = head.toString('latin1', pos, pos + 4);
      const len = head.readUInt32LE(pos + 4);
      if (id === 'fmt ' && pos + 22 <= head.length) blockAlign = Math.max(1, head.readUInt16LE(pos + 20));
      if (id === 'data') {
        const dataStart = pos + 8;
        const bytes = Math.max(0, Math.floor((size - dataStart) / blockAlign) * blockAlign);
        if (bytes === len && head.readUInt32LE(4) === dataStart + bytes - 8) return true;
        const u32 = Buffer.alloc(4);
        u32.writeUInt32LE(bytes);
        fs.writeSync(fd, u32, 0, 4, pos + 4);
        u32.writeUInt32LE(dataStart + bytes - 8);
        fs.writeSync(fd, u32, 0, 4, 4);
        fs.ftruncateSync(fd, dataStart + bytes);
        return true;
      }
      pos += 8 + len + (len & 1);
    }
    return false;
  } finally {
    fs.closeSync(fd);
  }
}
