// A real registrar for tests: Kamailio 5.6 (Debian) in the foreground on 127.0.0.1 with the config
// of testkit/kamailio/registrar.cfg (one user/password, bindings in memory, INVITEs relayed to
// the registered contact). stop() ends it (SIGTERM to its main process); start() again on the same port.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports';
import { captureOutput, endProcess } from './child-process';

const run = promisify(execFile);
const TEMPLATE = path.join(__dirname, 'kamailio', 'registrar.cfg');

export interface KamailioOptions {
  user: string;
  password: string;
  /** The registrar's max_expires (what it grants at most), seconds. */
  maxExpires: number;
  algorithm?: 'MD5' | 'SHA-256';
}

/**
 * One Kamailio in the foreground with a config file in `rundir` (the ctl socket must be
 * `unix:<rundir>/kamailio_ctl`): start() waits until it answers RPC, stop() ends it (SIGTERM, then
 * SIGKILL after 5 s). Kamailio below and the scale suites' edge (testkit/scale/edge.ts) run on it.
 */
export class KamailioProcess {
  private proc: ChildProcess | null = null;
  log = '';

  constructor(
    readonly cfg: string,
    readonly rundir: string,
    private readonly memory = { shm: 32, pkg: 4 },
  ) {}

  get ctl(): string {
    return `unix:${this.rundir}/kamailio_ctl`;
  }

  /** The main process id (the workers are its children), while it runs. */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  async start(): Promise<void> {
    if (this.proc) return;
    const args = ['-f', this.cfg, '-DD', '-E', '-Y', this.rundir, '-P', path.join(this.rundir, 'kamailio.pid'), '-w', this.rundir, '-m', String(this.memory.shm), '-M', String(this.memory.pkg)];
    const proc = spawn('kamailio', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    captureOutput(proc, (d) => (this.log = (this.log + d).slice(-200_000)));
    proc.on('exit', () => {
      if (this.proc === proc) this.proc = null;
    });
    const end = Date.now() + 8000;
    for (;;) {
      if (!this.proc) throw new Error(`kamailio exited:\n${this.log.slice(-2000)}`);
      if (
        await this.rpc('core.uptime').then(
          () => true,
          () => false,
        )
      )
        return;
      if (Date.now() > end) throw new Error(`kamailio did not start:\n${this.log.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    if (this.proc) await endProcess(this.proc, 'SIGTERM', 5000);
    this.proc = null;
  }

  async rpc(...args: string[]): Promise<string> {
    const { stdout } = await run('kamcmd', ['-s', this.ctl, ...args], { timeout: 3000 });
    return stdout;
  }
}

export class Kamailio {
  private readonly k: KamailioProcess;

  private constructor(
    readonly port: number,
    readonly rundir: string,
    private readonly o: KamailioOptions,
  ) {
    this.k = new KamailioProcess(path.join(rundir, 'registrar.cfg'), rundir);
  }

  static async create(o: KamailioOptions): Promise<Kamailio> {
    const k = new Kamailio(await freePort(), fs.mkdtempSync(path.join(os.tmpdir(), 'kam-')), o);
    await k.start();
    return k;
  }

  get ctl(): string {
    return this.k.ctl;
  }

  get log(): string {
    return this.k.log;
  }

  async start(): Promise<void> {
    const text = fs
      .readFileSync(TEMPLATE, 'utf8')
      .replaceAll('__PORT__', String(this.port))
      .replaceAll('__RUNDIR__', this.rundir)
      .replaceAll('__USER__', this.o.user)
      .replaceAll('__PASSWORD__', this.o.password)
      .replaceAll('__MAX_EXPIRES__', String(this.o.maxExpires))
      .replaceAll('__ALGORITHM__', this.o.algorithm ?? 'MD5');
    fs.writeFileSync(this.k.cfg, text);
    await this.k.start();
  }

  stop(): Promise<void> {
    return this.k.stop();
  }

  rpc(...args: string[]): Promise<string> {
    return this.k.rpc(...args);
  }

  /** The registered contacts (ul.dump's text). */
  async locations(): Promise<string> {
    return this.rpc('ul.dump');
  }

  async close(): Promise<void> {
    await this.stop();
    fs.rmSync(this.rundir, { recursive: true, force: true });
  }
}
