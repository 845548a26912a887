// Several nodes behind the shipped Kamailio edge, on loopback: each node is a sip-server (in this
// process, as sip-server/main.ts starts it) and a media-app child process (media-app/main.ts, so
// SIGTERM drains and SIGKILL kills it for real) with its own ports, node id and RTP range; two
// control-api copies (Express apps, each with its node sweeper as the control-api attachment runs
// it) share the Postgres database and the Redis key prefix with the nodes. `mediaServer: 'fsmrf'`: each
// node's media-app runs on the fsmrf backend against a switch of its own (testkit/media-app/switch.ts, in
// this process, its SIP face on a sip-server of its own), as each node of a deployment has its FreeSWITCH.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { EventPublisher, eventStreamKey } from '../../core/events/bus';
import { tieEventStream } from '../event-stream';
import { NodeSweeper, type SweepReport } from '../../core/calls/node-sweep';
import { buildTestApp, type TestApp } from '../api';
import { testDb, testDatabaseUrl } from '../db';
import { shardSlice } from '../ports';
import { startSipServer, startSwitchBeside, until, type SipServer } from '../media-app/harness';
import { egressSettingsFromEnv } from '../../core/net';
import { Edge, type EdgeOptions } from './edge';

const ROOT = path.resolve(__dirname, '../..');
const SECRET = 'cluster-secret';
export const SIP_DOMAIN = 'sip.test';

export interface ClusterNode {
  id: string;
  /** media-app's process id. */
  pid: number;
  sip: SipServer;
  sipPort: number;
  /** media-app's output (stdout + stderr). */
  out(): string;
  running(): boolean;
  /** Resolves with the exit code when media-app exits. */
  exited: Promise<number | null>;
  signal(sig: NodeJS.Signals): void;
}

export interface ClusterOptions {
  nodes?: number;
  /** Extra media-app environment (every node). */
  env?: Record<string, string>;
  /** Extra media-app environment per node (by index), over `env`. */
  nodeEnv?: Record<string, string>[];
  heartbeatMs?: number;
  sweepIntervalMs?: number;
  /** Edge options (SIP over WebSocket, keepalive...) besides its nodes. */
  edge?: Omit<EdgeOptions, 'nodes'>;
  /** 'fsmrf': every node's media-app on the fsmrf backend, a switch of its own each (default: the embedded engine). */
  mediaServer?: 'embedded' | 'fsmrf';
}

/** A node's switch (fsmrf), stopped with the cluster. */
type NodeSwitch = Awaited<ReturnType<typeof startSwitchBeside>>;

/** What a cluster runs, filled in as it starts: closed in reverse by closeParts, on close() or a failed start. */
interface Parts {
  sweepers: NodeSweeper[];
  nodes: ClusterNode[];
  edge?: Edge;
  switches: NodeSwitch[];
  sips: SipServer[];
  apis: TestApp[];
  redis: Redis;
  dataDir: string;
}

export class Cluster {
  readonly reports: SweepReport[] = [];

  private constructor(
    readonly edge: Edge,
    readonly nodes: ClusterNode[],
    readonly apis: TestApp[],
    private readonly parts: Parts,
    readonly prefix: string,
    readonly redis: Redis,
    readonly db: Knex,
    readonly dataDir: string,
  ) {}

  /** Starts the cluster; when a step fails, what was started (sip-servers, switches, nodes...) is closed before the error is thrown. */
  static async start(o: ClusterOptions = {}): Promise<Cluster> {
    const redisUrl = process.env.TEST_REDIS_URL;
    if (!redisUrl) throw new Error('TEST_REDIS_URL is not set: run `source .data/env`');
    const db = await testDb();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-'));
    const parts: Parts = { sweepers: [], nodes: [], switches: [], sips: [], apis: [], redis: new Redis(redisUrl), dataDir };
    try {
      return await Cluster.startParts(o, parts, redisUrl, db);
    } catch (err) {
      try {
        await closeParts(parts);
      } catch (closeErr) {
        throw new AggregateError([err, closeErr], `the cluster did not start (${(err as Error).message}), and closing what it started failed`);
      }
      throw err;
    }
  }

  private static async startParts(o: ClusterOptions, parts: Parts, redisUrl: string, db: Knex): Promise<Cluster> {
    const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
    const { redis, dataDir, sips, switches } = parts;
    const prefix = `tsc${process.pid}_${randomBytes(3).toString('hex')}:`;
    await tieEventStream(redis, eventStreamKey(prefix), 'start'); // eventsFor(c.redis, id): the cluster's events
    const n = o.nodes ?? 2;
    for (let i = 0; i < n; i++) sips.push(await startSipServer(logger, SECRET));
    // the switch writes the conference recordings and plays the prompts media-app fetches, on the DATA_DIR they share
    if (o.mediaServer === 'fsmrf')
      for (let i = 0; i < n; i++)
        switches.push(await startSwitchBeside(logger, egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }), { recordingsDir: path.join(dataDir, 'recordings'), dataDir }));
    const mediaEnv = (i: number): Record<string, string> => (switches[i] ? { MEDIA_SERVER: switches[i].sw.mediaServer } : {});
    // every node's start settles before a failure is thrown, so the ones that came up are closed with the rest
    const started = await Promise.allSettled(
      sips.map((sip, i) => startNode(sip, i, { prefix, dataDir, redisUrl, databaseUrl: '', env: { ...mediaEnv(i), ...o.env, ...o.nodeEnv?.[i] }, heartbeatMs: o.heartbeatMs ?? 1000 })),
    );
    for (const r of started) if (r.status === 'fulfilled') parts.nodes.push(r.value);
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const edge = (parts.edge = await Edge.start({ nodes: sips.map((s) => s.sipPort), ...o.edge }));
    const c = new Cluster(edge, parts.nodes, parts.apis, parts, prefix, redis, db, dataDir);
    for (let i = 0; i < 2; i++) {
      parts.apis.push(await buildTestApp({ env: { REDIS_KEY_PREFIX: prefix, DATA_DIR: dataDir, EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } }));
      const sweeper = new NodeSweeper({ db, redis, keyPrefix: prefix, events: new EventPublisher(redis, eventStreamKey(prefix)), logger, intervalMs: o.sweepIntervalMs ?? 1000, dataDir });
      sweeper.start((r) => c.reports.push(r));
      parts.sweepers.push(sweeper);
    }
    // every node probed and active before the tests send calls
    await until(async () => Object.values(await edge.states()).filter((s) => s.startsWith('A')).length === n, 15_000, 'every node active at the edge');
    return c;
  }

  /** The channels each node's switch carries now (fsmrf: one count per node; the embedded engine: none). */
  switchChannels(): number[] {
    return this.parts.switches.map((s) => s.sw.sw.esl.channels.size);
  }

  async close(): Promise<void> {
    await closeParts(this.parts);
  }
}

async function closeParts(p: Parts): Promise<void> {
  for (const s of p.sweepers) await s.stop();
  for (const node of p.nodes) {
    if (node.running()) {
      node.signal('SIGKILL');
      await node.exited;
    }
  }
  await p.edge?.close();
  for (const sw of p.switches) await sw.close();
  for (const sip of p.sips) {
    await sip.drachtio.close();
    await sip.stack.stop();
  }
  for (const a of p.apis) await a.close();
  p.redis.disconnect();
  fs.rmSync(p.dataDir, { recursive: true, force: true });
}

async function startNode(
  sip: SipServer,
  i: number,
  o: { prefix: string; dataDir: string; redisUrl: string; databaseUrl: string; env: Record<string, string>; heartbeatMs: number },
): Promise<ClusterNode> {
  const id = `node${i}-${process.pid}-${randomBytes(2).toString('hex')}`;
  // below the kernel's ephemeral ports, a block of 200 per node in this test process's share; nodes of
  // one cluster differ in the block's parity, so two of them never draw the same one
  const slice = shardSlice('nodeRtp', 200);
  const blocks = (slice.max - slice.min + 1) / 200;
  const rtpMin = slice.min + ((Math.floor(Math.random() * Math.floor(blocks / 2)) * 2 + i) % blocks) * 200;
  const proc: ChildProcess = spawn(process.execPath, ['--require', 'tsx/cjs', 'media-app/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: await testDatabaseUrl(),
      REDIS_URL: o.redisUrl,
      REDIS_KEY_PREFIX: o.prefix,
      DATA_DIR: o.dataDir,
      SIP_DOMAIN,
      JWT_SECRET: 'z'.repeat(40),
      DRACHTIO_HOST: '127.0.0.1',
      DRACHTIO_PORT: String(sip.drachtioPort),
      DRACHTIO_SECRET: SECRET,
      MEDIA_APP_NODE_ID: id,
      MEDIA_APP_HEARTBEAT_MS: String(o.heartbeatMs),
      RTP_PORT_MIN: String(rtpMin),
      RTP_PORT_MAX: String(rtpMin + 199),
      MEDIA_WORKERS: '1',
      MEDIA_APP_READY_LINE: '1',
      SIP_TRUSTED_PROXIES: '127.0.0.1/32',
      SIP_DIGEST_ALGORITHMS: 'MD5',
      EGRESS_ALLOW_CIDRS: '127.0.0.0/8',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
      ...o.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let alive = true;
  proc.stdout!.on('data', (d) => (out = (out + d).slice(-100_000)));
  proc.stderr!.on('data', (d) => (out = (out + d).slice(-100_000)));
  const exited = new Promise<number | null>((r) =>
    proc.once('exit', (code) => {
      alive = false;
      r(code);
    }),
  );
  // a node starts in a few seconds alone; in the split test run the other shard may hold both cores
  // (100 calls at once), and a start is not what these suites measure
  await until(() => out.includes('READY') || !alive, 90_000, `media-app ${id} ready`);
  if (!alive) throw new Error(`media-app ${id} exited:\n${out.slice(-3000)}`);
  return { id, pid: proc.pid!, sip, sipPort: sip.sipPort, out: () => out, running: () => alive, exited, signal: (sig) => void proc.kill(sig) };
}
