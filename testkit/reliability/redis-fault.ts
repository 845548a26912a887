/**
 * A Redis restart under the platform, for test/reliability/faults-redis.test.ts and
 * scripts/soak/faults.ts: our own redis-server (appendonly yes) in a temp dir, sip-server and a
 * media-app node on it; a phone registers, originate commands are queued (the shared queue paused,
 * as if every node were busy), Redis is stopped (SIGTERM) and started again on the same dir. Then the
 * registration must still route calls, each queued command must dial exactly once, and a command
 * enqueued again under the same id must not queue twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { Queue } from 'bullmq';
import { CommandBus } from '../../core/commands/bus';
import { ORIGINATE_QUEUE, nodeAliveKey } from '../../core/commands/contracts';
import { callsRepo } from '../../core/repos/calls';
import { freePort, sippMediaPort } from '../ports';
import { answeringUas, createExtension, registerOnly, sipp, startPlatform, until, sleep, type Platform, type SippResult } from '../media-app/harness';

export interface RedisServer {
  url: string;
  port: number;
  dir: string;
  proc: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** AOF, as scripts/setup.sh starts the embedded Redis: a SIGTERM loses nothing, a crash at most ~1 s. */
export const AOF = ['--appendonly', 'yes', '--appendfsync', 'everysec', '--save', ''];

/** redis-server on a free port in `dir` with the persistence settings given (default AOF). */
export async function startRedis(dir: string, opts: { port?: number; persistence?: string[] } = {}): Promise<RedisServer> {
  const p = opts.port ?? (await freePort());
  const proc = spawn('redis-server', ['--port', String(p), '--bind', '127.0.0.1', '--dir', dir, ...(opts.persistence ?? AOF)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const url = `redis://127.0.0.1:${p}`;
  await until(() => out.includes('Ready to accept connections') || proc.exitCode !== null, 10_000, `redis-server up: ${out}`);
  if (proc.exitCode !== null) throw new Error(`redis-server exited: ${out}`);
  return {
    url,
    port: p,
    dir,
    proc,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      await exited;
    },
  };
}

export interface RedisFaultResult {
  /** bindings of the phone's address-of-record before and after the restart */
  bindingsBefore: number;
  bindingsAfter: number;
  /** jobs waiting in the originate queue before and after the restart */
  waitingBefore: number;
  waitingAfter: number;
  /** jobs the queue holds after the same command ids were enqueued again */
  jobsAfterDuplicate: number;
  /** originate jobs: state and attempts */
  jobs: { id: string; state: string; attempts: number }[];
  /** distinct INVITEs the phone received (one per queued call is the pass line) */
  invitesAtPhone: number;
  rows: { id: string; status: string; tm_progressing: Date | null }[];
  /** media-app's heartbeat came back after the restart */
  heartbeatBack: boolean;
  phone: SippResult;
  restartMs: number;
}

export async function runRedisFault(o: { db: Knex; calls: number }): Promise<RedisFaultResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-fault-'));
  let redisServer = await startRedis(dir);
  let p: Platform | null = null;
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 2 });
  redis.on('error', () => undefined);
  let bus: CommandBus | null = null;
  let queue: Queue | null = null;
  try {
    p = await startPlatform({ REDIS_URL: redisServer.url, SIP_DIGEST_ALGORITHMS: 'MD5' });
    const prefix = p.config.redisKeyPrefix;
    bus = new CommandBus({ redis, keyPrefix: prefix });
    queue = new Queue(ORIGINATE_QUEUE, { connection: redis, prefix: bus.bullPrefix });
    queue.on('error', () => undefined);

    // a phone registers
    const x = await createExtension();
    const aor = `${x.ext.username}@${x.domain}`;
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(x.ext.username, x.domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', x.ext.username, '-ap', x.password]).done;
    if (reg.code !== 0) throw new Error(`REGISTER failed: ${reg.errors}`);
    const bindingsBefore = (await p.app.registrar.bindings.get(aor)).length;

    // calls to it are queued while no node takes originates (queue paused)
    await queue.pause();
    const ids: string[] = [];
    for (let i = 0; i < o.calls; i++) {
      const row = await callsRepo(o.db).create({
        customer_id: x.customerId,
        source: { type: 'tel', target: '+15550100' },
        destination: { type: 'extension', target: x.ext.extension },
        direction: 'outgoing',
        status: 'dialing',
        data: {
          actions: [
            { id: '00000000-0000-0000-0000-000000000001', type: 'sleep', option: { duration: 300 } },
            { id: '00000000-0000-0000-0000-000000000002', type: 'hangup', option: {} },
          ],
        },
      } as never);
      await bus.originate([row.id], x.customerId, `originate-${row.id}`);
      ids.push(row.id);
    }
    const waitingBefore = await queue.getWaitingCount();

    // Redis restarts: SIGTERM (AOF flushed), then the same dir and port
    const t0 = Date.now();
    await redisServer.stop();
    await sleep(500);
    redisServer = await startRedis(dir, { port: redisServer.port });
    const restartMs = Date.now() - t0;
    await until(async () => (await redis.ping().catch(() => '')) === 'PONG', 10_000, 'redis back');

    const bindingsAfter = (await p.app.registrar.bindings.get(aor)).length;
    const waitingAfter = await queue.getWaitingCount();
    for (const id of ids) await bus.originate([id], x.customerId, `originate-${id}`);
    const jobsAfterDuplicate = (await queue.getJobs(['wait', 'active', 'completed', 'failed', 'delayed'])).length;
    const heartbeatBack = Boolean(await until(() => redis.exists(prefix + nodeAliveKey(p!.app.nodeId)), 10_000, 'heartbeat back').catch(() => 0));

    // the phone answers; the node takes the queued originates once
    const phone = sipp(
      answeringUas({ tag: '[pid]phone', contact: `<sip:${x.ext.username}@[local_ip]:[local_port]>`, inviteTimeoutMs: 30_000 }),
      ['-i', '127.0.0.1', '-p', String(phonePort), '-m', String(o.calls), '-mi', '127.0.0.1', '-mp', String(await sippMediaPort()), '-timeout', '60s'],
      { killAfterMs: 70_000 },
    );
    await sleep(300);
    await queue.resume();
    const rows = await until(
      async () => {
        const r = await o.db('calls').whereIn('id', ids).select('id', 'status', 'tm_progressing');
        return r.every((c) => c.status === 'hangup') ? r : null;
      },
      30_000 + o.calls * 500,
      'queued calls made and ended',
    );
    await sleep(1000); // a duplicate INVITE would come now
    const phoneResult = await Promise.race([phone.done, sleep(20_000).then(() => null)]);
    const messages = phoneResult?.messages ?? '';
    const invites = new Set([...messages.matchAll(/^INVITE [^\n]*\n(?:[^\n]+\n)*?Call-ID:\s*(\S+)/gim)].map((m) => m[1]));
    const jobs = [];
    for (const id of ids) {
      const j = await queue.getJob(`originate-${id}`);
      jobs.push({ id, state: j ? await j.getState() : 'missing', attempts: j?.attemptsMade ?? -1 });
    }
    return {
      bindingsBefore,
      bindingsAfter,
      waitingBefore,
      waitingAfter,
      jobsAfterDuplicate,
      jobs,
      invitesAtPhone: invites.size,
      rows,
      heartbeatBack,
      phone: phoneResult ?? { code: null, stdout: '', stderr: 'phone did not finish', errors: '', messages: '' },
      restartMs,
    };
  } finally {
    await queue?.close().catch(() => undefined);
    await bus?.close();
    redis.disconnect();
    await p?.close().catch(() => undefined);
    await redisServer.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
