/**
 * The platform's three processes (sip-server, media-app, control-api) as children, each started again
 * `restartMs` after it dies (a per-process supervisor: systemd's `RestartSec=2` of
 * deploy/systemd/openvoice-node.service, applied per process; scripts/start.ts on main stops the whole
 * node when one child dies instead). For scripts/bench/chaos (kill -9 of each in turn) and the soak
 * (scripts/soak/mixed.ts, test/reliability/soak.test.ts). Extra `--require` modules are preloaded into
 * every process (scripts/soak/probe.cjs, testkit/reliability/worker-kill.cjs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { freePort, portBlock, type PortRangeName } from '../ports';

const ROOT = path.resolve(__dirname, '../..');
export type ProcName = 'sip-server' | 'media-app' | 'control-api';

/** One supervised child: spawned again after each exit until `stop`. */
export class Supervised {
  proc: ChildProcess | null = null;
  /** the output of the current run (the last 40,000 characters) */
  out = '';
  /** runs started (1 + restarts) and when the current one printed its ready line */
  runs = 0;
  readyAt = 0;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly name: ProcName,
    private readonly entry: string,
    private readonly env: Record<string, string>,
    private readonly nodeArgs: string[],
    private readonly readyText: string,
    private readonly restartMs: number,
  ) {}

  get pid(): number {
    return this.proc?.pid ?? 0;
  }

  get up(): boolean {
    return !!this.proc && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  start(): void {
    this.runs++;
    this.out = '';
    this.readyAt = 0;
    const proc = spawn(process.execPath, [...this.nodeArgs, '--require', 'tsx/cjs', this.entry], { cwd: ROOT, env: { ...process.env, ...this.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    const keep = (d: Buffer) => {
      this.out = (this.out + d).slice(-40_000);
      if (!this.readyAt && this.out.includes(this.readyText)) this.readyAt = Date.now();
    };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    this.exited = new Promise((resolve) =>
      proc.once('exit', () => {
        resolve();
        if (!this.stopping) this.restartTimer = setTimeout(() => this.start(), this.restartMs);
      }),
    );
  }

  kill(signal: NodeJS.Signals): void {
    if (this.up) this.proc!.kill(signal);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.up) {
      this.proc!.kill('SIGTERM');
      const force = setTimeout(() => this.proc?.kill('SIGKILL'), 12_000);
      await this.exited;
      clearTimeout(force);
    }
  }
}

export interface PlatformProcesses {
  sipPort: number;
  httpPort: number;
  apiUrl: string;
  dataDir: string;
  procs: Record<ProcName, Supervised>;
  /** every process has printed its ready line in its current run */
  ready(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface PlatformProcessOptions {
  databaseUrl: string;
  redisUrl: string;
  dataDir: string;
  /** modules each process loads first (`--require`), e.g. a probe */
  preload?: string[];
  /** node options of each process before the preloads, e.g. `--expose-gc` for the probe's collection */
  nodeArgs?: string[];
  /** media-app's media workers (threads) */
  mediaWorkers?: number;
  restartMs?: number;
  /**
   * The range (this shard's slice) media-app's RTP ports come from, default `platformRtp`: two stands of
   * one shard running at once need different ones (the chaos bench takes `nodeRtp`). On one range both
   * pools walked the same ports, and a call failed once 20 in a row were the other's (soak 2026-11-26).
   */
  rtpRange?: PortRangeName;
  rtpPorts?: number;
  env?: Record<string, string>;
}

/** The three processes, each with the environment and arguments scripts/start.ts gives it, on this stand's ports. */
function supervisedProcesses(o: PlatformProcessOptions, ports: { sipPort: number; drachtioPort: number; httpPort: number }): Record<ProcName, Supervised> {
  const { sipPort, drachtioPort, httpPort } = ports;
  const secret = randomBytes(8).toString('hex');
  const rtp = portBlock(o.rtpRange ?? 'platformRtp', o.rtpPorts ?? 1000);
  const common = {
    DATABASE_URL: o.databaseUrl,
    REDIS_URL: o.redisUrl,
    REDIS_KEY_PREFIX: `pp${process.pid}_${randomBytes(3).toString('hex')}:`,
    DATA_DIR: o.dataDir,
    JWT_SECRET: 'p'.repeat(40),
    LOG_LEVEL: 'warn',
    SIP_DOMAIN: 'sip.test',
    METRICS_LISTEN: 'off',
    SIP_METRICS_LISTEN: 'off',
    MEDIA_APP_METRICS_LISTEN: 'off',
    DRACHTIO_HOST: '127.0.0.1',
    DRACHTIO_PORT: String(drachtioPort),
    DRACHTIO_SECRET: secret,
    ...o.env,
  };
  const pre = [...(o.nodeArgs ?? []), ...(o.preload ?? []).flatMap((m) => ['--require', m])];
  const restartMs = o.restartMs ?? 2000;
  return {
    'sip-server': new Supervised(
      'sip-server',
      'sip-server/main.ts',
      { ...common, SIP_LISTEN_HOST: '127.0.0.1', SIP_PORT: String(sipPort), SIP_TRANSPORTS: 'udp,tcp', SIP_ALLOWLIST: '127.0.0.1', SIP_UA_BLOCKLIST: 'none-such-agent', SIP_SERVER_READY_LINE: '1' },
      pre,
      'READY',
      restartMs,
    ),
    'media-app': new Supervised(
      'media-app',
      'media-app/main.ts',
      {
        ...common,
        MEDIA_APP_NODE_ID: `pp-${process.pid}`,
        RTP_PORT_MIN: String(rtp.min),
        RTP_PORT_MAX: String(rtp.max),
        MEDIA_WORKERS: String(o.mediaWorkers ?? 2),
        MEDIA_APP_READY_LINE: '1',
      },
      // as scripts/start.ts runs it
      ['--single-threaded-gc', ...pre],
      'READY',
      restartMs,
    ),
    'control-api': new Supervised(
      'control-api',
      'control-api/main.ts',
      { ...common, HTTP_HOST: '127.0.0.1', HTTP_PORT: String(httpPort), RATE_LIMIT_SCALE: '0', PUBLIC_URL: `http://127.0.0.1:${httpPort}` },
      pre,
      'listening',
      restartMs,
    ),
  };
}

export async function startPlatformProcesses(o: PlatformProcessOptions): Promise<PlatformProcesses> {
  const [sipPort, drachtioPort, httpPort] = [await freePort(), await freePort(), await freePort()];
  const procs = supervisedProcesses(o, { sipPort, drachtioPort, httpPort });
  const all = Object.values(procs);
  const ready = async (timeoutMs = 60_000) => {
    const end = Date.now() + timeoutMs;
    while (!all.every((p) => p.readyAt)) {
      if (Date.now() > end) throw new Error(`processes not ready:\n${all.map((p) => `${p.name}: ${p.out.slice(-3000)}`).join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  // sip-server first, so media-app finds it (as scripts/start.ts)
  procs['sip-server'].start();
  procs['media-app'].start();
  procs['control-api'].start();
  const stop = async () => {
    // media-app first: its calls end while sip-server still carries them
    await procs['media-app'].stop();
    await Promise.all([procs['control-api'].stop(), procs['sip-server'].stop()]);
  };
  try {
    await ready();
  } catch (e) {
    await stop();
    throw e;
  }
  return { sipPort, httpPort, apiUrl: `http://127.0.0.1:${httpPort}/v1.0`, dataDir: o.dataDir, procs, ready, stop };
}
