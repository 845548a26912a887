/**
 * The platform as `scripts/start.ts` runs it: sip-server, media-app and control-api each a child process
 * of its own (their main.ts), on loopback ports of this test shard, the test database and the test Redis
 * under a fresh key prefix. For the faults that end or must not end a process (test/reliability:
 * http-ws-faults, faults-control-api). Every listener's port is known: REST (with the WebSockets and the
 * provisioning URL), SIP over UDP/TCP and WebSocket, the drachtio port, media-app's stream relay and the
 * three /metrics listeners.
 *
 *   const p = await ProcessPlatform.start();
 *   p.proc('control-api').kill('SIGKILL'); await p.restart('control-api');
 *   p.unhandled();   // lines of any child's output that tell of an uncaught error
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testDatabaseUrl } from '../db';
import { freePort, portBlock } from '../ports';
import { until } from '../media-app/harness';

const ROOT = path.resolve(__dirname, '../..');
export const PROCESS_NAMES = ['sip-server', 'media-app', 'control-api'] as const;
export type ProcessName = (typeof PROCESS_NAMES)[number];
const ENTRY: Record<ProcessName, { entry: string; ready: RegExp }> = {
  'sip-server': { entry: 'sip-server/main.ts', ready: /^READY /m },
  'media-app': { entry: 'media-app/main.ts', ready: /^READY /m },
  'control-api': { entry: 'control-api/main.ts', ready: /^control-api listening on /m },
};
/** What a crashing Node process or an unhandled 'error' event writes (the fault tests want none). */
export const UNHANDLED = /Unhandled 'error' event|Emitted 'error' event|uncaughtException|unhandledRejection|UnhandledPromiseRejection|^node:[a-z_/]+:\d+$/;

export interface ChildHandle {
  name: ProcessName;
  pid: number;
  /** stdout + stderr so far (the last 200 kB). */
  out(): string;
  alive(): boolean;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(sig: NodeJS.Signals): void;
}

export interface PlatformPorts {
  http: number;
  sip: number;
  sipWs: number;
  drachtio: number;
  relay: number;
  apiMetrics: number;
  sipMetrics: number;
  mediaMetrics: number;
}

function spawnChild(name: ProcessName, env: NodeJS.ProcessEnv): ChildHandle {
  const proc: ChildProcess = spawn(process.execPath, ['--require', 'tsx/cjs', ENTRY[name].entry], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let alive = true;
  const add = (d: Buffer) => (out = (out + d.toString()).slice(-200_000));
  proc.stdout!.on('data', add);
  proc.stderr!.on('data', add);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    proc.once('exit', (code, signal) => {
      alive = false;
      r({ code, signal });
    }),
  );
  return { name, pid: proc.pid!, out: () => out, alive: () => alive, exited, kill: (sig) => void proc.kill(sig) };
}

export class ProcessPlatform {
  private readonly children = new Map<ProcessName, ChildHandle>();
  /** Output of the processes that were restarted (their earlier lives), for `unhandled()`. */
  private readonly earlier: string[] = [];

  private constructor(
    readonly ports: PlatformPorts,
    readonly env: Record<ProcessName, NodeJS.ProcessEnv>,
    readonly prefix: string,
    readonly dataDir: string,
  ) {}

  static async start(o: { env?: Record<string, string>; jwtSecret?: string } = {}): Promise<ProcessPlatform> {
    const redisUrl = process.env.TEST_REDIS_URL;
    if (!redisUrl) throw new Error('TEST_REDIS_URL is not set: run `source .data/env`');
    const ports: PlatformPorts = {
      http: await freePort(),
      sip: await freePort(),
      sipWs: await freePort(),
      drachtio: await freePort(),
      relay: await freePort(),
      apiMetrics: await freePort(),
      sipMetrics: await freePort(),
      mediaMetrics: await freePort(),
    };
    const prefix = `tpp${process.pid}_${randomBytes(3).toString('hex')}:`;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'process-platform-'));
    const secret = 'process-platform-secret';
    const rtpMin = portBlock('platformRtp', 200).min;
    const common: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: await testDatabaseUrl(),
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: prefix,
      DATA_DIR: dataDir,
      SIP_DOMAIN: 'sip.test',
      JWT_SECRET: o.jwtSecret ?? 'p'.repeat(40),
      PUBLIC_URL: `http://127.0.0.1:${ports.http}`,
      DRACHTIO_HOST: '127.0.0.1',
      DRACHTIO_PORT: String(ports.drachtio),
      DRACHTIO_SECRET: secret,
      EGRESS_ALLOW_CIDRS: '127.0.0.0/8',
      RATE_LIMIT_SCALE: '0',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
      ...o.env,
    };
    const env: Record<ProcessName, NodeJS.ProcessEnv> = {
      'sip-server': {
        ...common,
        SIP_LISTEN_HOST: '127.0.0.1',
        SIP_PORT: String(ports.sip),
        SIP_WS_HOST: '127.0.0.1',
        SIP_WS_PORT: String(ports.sipWs),
        SIP_WS_ALLOWED_ORIGINS: `http://127.0.0.1:${ports.http}`,
        SIP_METRICS_LISTEN: `127.0.0.1:${ports.sipMetrics}`,
        SIP_SERVER_READY_LINE: '1',
      },
      'media-app': {
        ...common,
        MEDIA_APP_NODE_ID: `pp-${process.pid}-${randomBytes(2).toString('hex')}`,
        MEDIA_APP_HEARTBEAT_MS: '1000',
        MEDIA_APP_METRICS_LISTEN: `127.0.0.1:${ports.mediaMetrics}`,
        MEDIA_STREAM_RELAY_PORT: String(ports.relay),
        RTP_PORT_MIN: String(rtpMin),
        RTP_PORT_MAX: String(rtpMin + 199),
        MEDIA_WORKERS: '1',
        MEDIA_APP_READY_LINE: '1',
      },
      'control-api': { ...common, HTTP_HOST: '127.0.0.1', HTTP_PORT: String(ports.http), METRICS_LISTEN: `127.0.0.1:${ports.apiMetrics}` },
    };
    const p = new ProcessPlatform(ports, env, prefix, dataDir);
    try {
      for (const name of PROCESS_NAMES) await p.launch(name);
    } catch (e) {
      await p.close();
      throw e;
    }
    return p;
  }

  proc(name: ProcessName): ChildHandle {
    return this.children.get(name)!;
  }

  /** Starts `name` (again) and waits for its ready line (a loaded machine takes a while to start tsx). */
  async launch(name: ProcessName): Promise<ChildHandle> {
    const old = this.children.get(name);
    if (old?.alive()) throw new Error(`${name} is running`);
    if (old) this.earlier.push(old.out());
    const c = spawnChild(name, this.env[name]);
    this.children.set(name, c);
    await until(() => ENTRY[name].ready.test(c.out()) || !c.alive(), 90_000, `${name} ready`);
    if (!c.alive()) throw new Error(`${name} exited at start:\n${c.out().slice(-3000)}`);
    return c;
  }

  /** The processes that are not running. */
  dead(): ProcessName[] {
    return PROCESS_NAMES.filter((n) => !this.children.get(n)?.alive());
  }

  /** The end of each dead process's output: why it exited. */
  obituaries(): string {
    return this.dead()
      .map((n) => `[${n}] ${this.children.get(n)?.out().slice(-1500) ?? 'never started'}`)
      .join('\n');
  }

  /** Output lines (with the process's name) that tell of an unhandled error, over every life of every process. */
  unhandled(): string[] {
    const texts = [...this.earlier, ...[...this.children.values()].map((c) => `[${c.name}]\n${c.out()}`)];
    return texts.flatMap((t) => t.split('\n').filter((l) => UNHANDLED.test(l)));
  }

  async close(): Promise<void> {
    for (const c of this.children.values()) {
      if (!c.alive()) continue;
      c.kill('SIGTERM');
      const t = setTimeout(() => c.kill('SIGKILL'), 5000);
      await c.exited;
      clearTimeout(t);
    }
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}
