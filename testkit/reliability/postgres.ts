/**
 * A Postgres of the test's own (initdb in a temp dir, on a free port) that the test may stop and
 * start: the shared embedded one must never be stopped. Runs the server as the postgres system
 * user when the test runs as root (the server refuses root), as scripts/setup.sh does. Used by
 * test/reliability/faults-postgres.test.ts (stop and start) and scripts/bench/chaos (kill -9).
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../ports';

export interface OwnPostgres {
  url: string;
  port: number;
  dir: string;
  /**
   * pg_ctl stop -m fast: open sessions are terminated (57P01), new connections refused. Not blocking
   * the test's event loop meanwhile (its RTP sinks time the packets as they come).
   */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** The postmaster's pid (from postmaster.pid), or 0 when it is not running. */
  pid(): number;
  /**
   * kill -9 of the postmaster (its backends exit when they see it gone); `start` afterwards brings it
   * back through crash recovery, once the orphaned backends have released the shared memory.
   */
  kill(): Promise<void>;
  /** Stops the server and removes its directory. */
  destroy(): void;
}

function pgBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'pg_ctl')));
  versions.sort((a, b) => Number(a) - Number(b));
  if (!versions.length) throw new Error('no Postgres server binaries under /usr/lib/postgresql');
  return path.join(root, versions[versions.length - 1]!, 'bin');
}

/** The process exists and is not a zombie waiting for its parent. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

export async function startOwnPostgres(database = 'platform'): Promise<OwnPostgres> {
  const bin = pgBin();
  const root = process.getuid?.() === 0;
  /** the file and arguments that run the server's `cmd` as the postgres user when the test runs as root */
  const pgCommand = (cmd: string, args: string[]): [string, string[]] => (root ? ['runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args]] : [path.join(bin, cmd), args]);
  const asPg = (cmd: string, args: string[]) => execFileSync(...pgCommand(cmd, args), { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 }).toString();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'own-pg-'));
  const data = path.join(dir, 'data');
  fs.mkdirSync(data, { mode: 0o700 });
  if (root) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  asPg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const startArgs = ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', '-o', opts, 'start'];
  const stopArgs = ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop'];
  const pgCtl = (args: string[]) =>
    new Promise<void>((resolve, reject) => {
      execFile(...pgCommand('pg_ctl', args), { timeout: 60_000 }, (err, _out, stderr) => (err ? reject(new Error(`pg_ctl ${args.at(-1)}: ${err.message} ${stderr}`)) : resolve()));
    });
  const postmaster = () => {
    try {
      const pid = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return alive(pid) ? pid : 0;
    } catch {
      return 0;
    }
  };
  asPg('pg_ctl', startArgs);
  asPg('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', database]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/${database}`,
    port,
    dir,
    stop: () => pgCtl(stopArgs),
    start: () => pgCtl(startArgs),
    pid: postmaster,
    async kill() {
      const pid = postmaster();
      if (!pid) return;
      process.kill(pid, 'SIGKILL');
      const end = Date.now() + 10_000;
      while (Date.now() < end && alive(pid)) await new Promise((r) => setTimeout(r, 50));
    },
    destroy() {
      spawnSync(...pgCommand('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']), { stdio: 'ignore' });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
