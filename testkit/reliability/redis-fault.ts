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

type Extension = Awaited<ReturnType<typeof createExtension>>;

/** A phone registers an extension from its own port: the extension, its address-of-record and port, and the bindings the registrar holds. */
async function registeredPhone(p: Platform): Promise<{ x: Extension; aor: string; phonePort: number; bindings: number }> {
  const x = await createExtension();
  const aor = `${x.ext.username}@${x.domain}`;
  const phonePort = await freePort();
  const reg = await sipp(registerOnly(x.ext.username, x.domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', x.ext.username, '-ap', x.password]).done;
  if (reg.code !== 0) throw new Error(`REGISTER failed: ${reg.errors}`);
  return { x, aor, phonePort, bindings: (await p.app.registrar.bindings.get(aor)).length };
}

/** `calls` outgoing calls to the extension, each a row and an originate command (the queue is paused: they wait); their ids. */
async function queueOriginates(db: Knex, bus: CommandBus, x: Extension, calls: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < calls; i++) {
    const row = await callsRepo(db).create({
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
  return ids;
}

/** Redis restarts: SIGTERM (AOF flushed), then the same dir and port; resolves with the new server once `redis` answers again. */
async function restartRedis(server: RedisServer, redis: Redis): Promise<{ server: RedisServer; restartMs: number }> {
  const t0 = Date.now();
  await server.stop();
  await sleep(500);
  const again = await startRedis(server.dir, { port: server.port });
  const restartMs = Date.now() - t0;
  await until(async () => (await redis.ping().catch(() => '')) === 'PONG', 10_000, 'redis back');
  return { server: again, restartMs };
}

/**
 * The phone answers on its port; the queue resumes and the node takes the queued originates. Resolves once
 * every call has ended, with the rows, what the phone saw, and the distinct INVITEs in it.
 */
async function answerQueued(db: Knex, queue: Queue, phone: { x: Extension; phonePort: number }, ids: string[]) {
  const { x, phonePort } = phone;
  const uas = sipp(
    answeringUas({ tag: '[pid]phone', contact: `<sip:${x.ext.username}@[local_ip]:[local_port]>`, inviteTimeoutMs: 30_000 }),
    ['-i', '127.0.0.1', '-p', String(phonePort), '-m', String(ids.length), '-mi', '127.0.0.1', '-mp', String(await sippMediaPort()), '-timeout', '60s'],
    { killAfterMs: 70_000 },
  );
  await sleep(300);
  await queue.resume();
  const rows = await until(
    async () => {
      const r = await db('calls').whereIn('id', ids).select('id', 'status', 'tm_progressing');
      return r.every((c) => c.status === 'hangup') ? r : null;
    },
    30_000 + ids.length * 500,
    'queued calls made and ended',
  );
  await sleep(1000); // a duplicate INVITE would come now
  const result = await Promise.race([uas.done, sleep(20_000).then(() => null)]);
  const messages = result?.messages ?? '';
  const invites = new Set([...messages.matchAll(/^INVITE [^\n]*\n(?:[^\n]+\n)*?Call-ID:\s*(\S+)/gim)].map((m) => m[1]));
  return { rows, result, invites: invites.size };
}

async function jobStates(queue: Queue, ids: string[]): Promise<RedisFaultResult['jobs']> {
  const jobs: RedisFaultResult['jobs'] = [];
  for (const id of ids) {
    const j = await queue.getJob(`originate-${id}`);
    jobs.push({ id, state: j ? await j.getState() : 'missing', attempts: j?.attemptsMade ?? -1 });
  }
  return jobs;
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

    const phone = await registeredPhone(p);
    // calls to it are queued while no node takes originates (queue paused)
    await queue.pause();
    const ids = await queueOriginates(o.db, bus, phone.x, o.calls);
    const waitingBefore = await queue.getWaitingCount();

    const restarted = await restartRedis(redisServer, redis);
    redisServer = restarted.server;

    const bindingsAfter = (await p.app.registrar.bindings.get(phone.aor)).length;
    const waitingAfter = await queue.getWaitingCount();
    for (const id of ids) await bus.originate([id], phone.x.customerId, `originate-${id}`);
    const jobsAfterDuplicate = (await queue.getJobs(['wait', 'active', 'completed', 'failed', 'delayed'])).length;
    const heartbeatBack = Boolean(await until(() => redis.exists(prefix + nodeAliveKey(p!.app.nodeId)), 10_000, 'heartbeat back').catch(() => 0));

    const answered = await answerQueued(o.db, queue, phone, ids);
    return {
      bindingsBefore: phone.bindings,
      bindingsAfter,
      waitingBefore,
      waitingAfter,
      jobsAfterDuplicate,
      jobs: await jobStates(queue, ids),
      invitesAtPhone: answered.invites,
      rows: answered.rows,
      heartbeatBack,
      phone: answered.result ?? { code: null, stdout: '', stderr: 'phone did not finish', errors: '', messages: '' },
      restartMs: restarted.restartMs,
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
