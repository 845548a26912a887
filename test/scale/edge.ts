// The shipped edge (deploy/kamailio/kamailio.cfg, unmodified) on a free loopback port: the test
// writes only kamailio-local.cfg (listen address, dispatcher list, ctl socket, limits) and
// dispatcher.list next to a copy of the config, as an operator would.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../support/ports';

const run = promisify(execFile);
const CONFIG = path.join(__dirname, '..', '..', 'deploy', 'kamailio', 'kamailio.cfg');

export interface EdgeOptions {
  /** The nodes' sip-server ports on 127.0.0.1 (dispatcher set 1). */
  nodes: number[];
  pikeReqs?: number;
  inviteRate?: number;
  pingIntervalSec?: number;
}

export class Edge {
  private proc: ChildProcess | null = null;
  log = '';

  private constructor(readonly port: number, readonly rundir: string) {}

  static async start(o: EdgeOptions): Promise<Edge> {
    const e = new Edge(await freePort(), fs.mkdtempSync(path.join(os.tmpdir(), 'edge-')));
    fs.copyFileSync(CONFIG, path.join(e.rundir, 'kamailio.cfg'));
    fs.writeFileSync(path.join(e.rundir, 'dispatcher.list'), o.nodes.map((p, i) => `1 sip:127.0.0.1:${p} 0 0 node=${i}\n`).join(''));
    fs.writeFileSync(
      path.join(e.rundir, 'kamailio-local.cfg'),
      [
        '#!define EDGE_LISTENS',
        `listen=udp:127.0.0.1:${e.port}`,
        `listen=tcp:127.0.0.1:${e.port}`,
        `#!substdef "!DISPATCHER_LIST!${e.rundir}/dispatcher.list!"`,
        `#!substdef "!CTL_SOCKET!unix:${e.rundir}/kamailio_ctl!"`,
        `#!define PIKE_REQS ${o.pikeReqs ?? 100000}`,
        `#!define INVITE_RATE ${o.inviteRate ?? 10000}`,
        `#!define DS_PING_INTERVAL ${o.pingIntervalSec ?? 1}`,
        '',
      ].join('\n'),
    );
    await e.run();
    return e;
  }

  /** Kamailio's main process id (its workers are its children). */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** Sets a node (by sip-server port) active ('a') or inactive ('i') at the dispatcher. */
  async setState(port: number, state: 'a' | 'i'): Promise<void> {
    await this.rpc('dispatcher.set_state', state, '1', `sip:127.0.0.1:${port}`);
  }

  get ctl(): string {
    return `unix:${this.rundir}/kamailio_ctl`;
  }

  private async run(): Promise<void> {
    const cfg = path.join(this.rundir, 'kamailio.cfg');
    const proc = spawn('kamailio', ['-f', cfg, '-DD', '-E', '-Y', this.rundir, '-P', path.join(this.rundir, 'kamailio.pid'), '-w', this.rundir, '-m', '64', '-M', '8'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc = proc;
    proc.stdout?.on('data', (d) => (this.log = (this.log + d).slice(-200_000)));
    proc.stderr?.on('data', (d) => (this.log = (this.log + d).slice(-200_000)));
    proc.on('exit', () => {
      if (this.proc === proc) this.proc = null;
    });
    const end = Date.now() + 8000;
    for (;;) {
      if (!this.proc) throw new Error(`kamailio exited:\n${this.log.slice(-3000)}`);
      if (await this.rpc('core.uptime').then(() => true, () => false)) return;
      if (Date.now() > end) throw new Error(`kamailio did not start:\n${this.log.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async rpc(...args: string[]): Promise<string> {
    const { stdout } = await run('kamcmd', ['-s', this.ctl, ...args], { timeout: 3000 });
    return stdout;
  }

  /** Dispatcher state per node port: 'A' active, 'I' inactive, 'P' probing (first letter of FLAGS). */
  async states(): Promise<Record<number, string>> {
    const out = await this.rpc('dispatcher.list');
    const states: Record<number, string> = {};
    const re = /URI:\s*sip:127\.0\.0\.1:(\d+)\s+FLAGS:\s*(\w+)/g;
    for (let m = re.exec(out); m; m = re.exec(out)) states[Number(m[1])] = m[2]!;
    return states;
  }

  async close(): Promise<void> {
    const p = this.proc;
    if (p) {
      const gone = new Promise<void>((r) => p.once('exit', () => r()));
      p.kill('SIGTERM');
      const killer = setTimeout(() => p.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(killer);
    }
    fs.rmSync(this.rundir, { recursive: true, force: true });
  }
}
