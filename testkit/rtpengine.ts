// A real rtpengine for tests: Debian's rtpengine-daemon in userspace (no kernel module), foreground,
// on 127.0.0.1 with its own ng control port and its own block of media ports. stop() ends it
// (SIGTERM, or SIGKILL with `kill()` to play a crash); start() again on the same ports.
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, portBlock } from './ports';
import { captureOutput, endProcess } from './child-process';

export interface RtpengineOptions {
  /** Media ports [min, max]; a random block of 200 in this test process's share of PORT_RANGES.rtpengine when not given. */
  portRange?: [number, number];
  /** Extra command-line switches. */
  args?: string[];
}

/** Bases of the blocks the rtpengines of this process hold: two in one test never share one. */
const held = new Set<number>();

function randomBlock(): [number, number] {
  let base = 0;
  let tries = 0;
  do base = portBlock('rtpengine', 200).min;
  while (held.has(base) && ++tries < 100);
  return [base, base + 199];
}

/** One ng `ping` over UDP (bencode: `d7:command4:pinge`); resolves true on `pong`. */
export function ngPing(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = dgram.createSocket('udp4');
    const cookie = `t${Math.random().toString(36).slice(2, 10)}`;
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      sock.close();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    sock.on('message', (msg) => {
      if (msg.toString().startsWith(cookie)) done(msg.toString().includes('pong'));
    });
    sock.on('error', () => done(false));
    sock.send(`${cookie} d7:command4:pinge`, port, host);
  });
}

export class Rtpengine {
  private proc: ChildProcess | null = null;
  log = '';

  private constructor(
    readonly ngPort: number,
    readonly portRange: [number, number],
    readonly rundir: string,
    private readonly extra: string[],
  ) {}

  static async create(o: RtpengineOptions = {}): Promise<Rtpengine> {
    const r = new Rtpengine(await freePort(), o.portRange ?? randomBlock(), fs.mkdtempSync(path.join(os.tmpdir(), 'rtpe-')), o.args ?? []);
    held.add(r.portRange[0]);
    await r.start();
    return r;
  }

  /** `host:port` of the ng control socket (what RTPENGINE_NG takes). */
  get ng(): string {
    return `127.0.0.1:${this.ngPort}`;
  }

  get running(): boolean {
    return this.proc !== null;
  }

  async start(): Promise<void> {
    if (this.proc) return;
    const args = [
      '--config-file=none',
      '--table=-1',
      '--foreground',
      '--log-stderr',
      '--log-level=6',
      '--interface=127.0.0.1',
      `--listen-ng=127.0.0.1:${this.ngPort}`,
      `--port-min=${this.portRange[0]}`,
      `--port-max=${this.portRange[1]}`,
      `--pidfile=${path.join(this.rundir, 'rtpengine.pid')}`,
      ...this.extra,
    ];
    const proc = spawn('rtpengine', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    captureOutput(proc, (d) => (this.log += d));
    proc.on('exit', () => {
      if (this.proc === proc) this.proc = null;
    });
    const end = Date.now() + 5000;
    for (;;) {
      if (!this.proc) throw new Error(`rtpengine exited:\n${this.log.slice(-2000)}`);
      if (await ngPing(this.ngPort, '127.0.0.1', 200)) return;
      if (Date.now() > end) throw new Error(`rtpengine did not start:\n${this.log.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private async end(signal: NodeJS.Signals): Promise<void> {
    if (this.proc) await endProcess(this.proc, signal, 5000);
    this.proc = null;
  }

  /** A clean stop (SIGTERM). */
  stop(): Promise<void> {
    return this.end('SIGTERM');
  }

  /** A crash (SIGKILL): no goodbye to anyone. */
  kill(): Promise<void> {
    return this.end('SIGKILL');
  }

  async dispose(): Promise<void> {
    await this.stop();
    held.delete(this.portRange[0]);
    fs.rmSync(this.rundir, { recursive: true, force: true });
  }
}
