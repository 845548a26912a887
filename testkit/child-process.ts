/**
 * A program the harness runs as a child process (baresip, linphonec, rtpengine, Kamailio): what it
 * writes kept as it comes, and its end asked for, forced when it does not come, and waited on.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** Hands `take` each chunk `proc` writes to its stdout and its stderr (piped), as it comes. */
export function captureOutput(proc: ChildProcess, take: (chunk: string) => void): void {
  proc.stdout?.on('data', (d: Buffer) => take(d.toString()));
  proc.stderr?.on('data', (d: Buffer) => take(d.toString()));
}

/**
 * Ends `proc` and resolves once it has exited: `ask` asks it to (a signal, or the program's own way,
 * e.g. linphonec's `quit` on its stdin); still running `killAfterMs` later, it gets SIGKILL. A process
 * that never started or has already exited resolves at once.
 */
export async function endProcess(proc: ChildProcess, ask: NodeJS.Signals | ((p: ChildProcess) => void), killAfterMs = 3000): Promise<void> {
  if (proc.pid === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
  const gone = new Promise<void>((r) => proc.once('exit', () => r()));
  if (typeof ask === 'function') ask(proc);
  else proc.kill(ask);
  const killer = setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
  await gone;
  clearTimeout(killer);
}

/**
 * Runs a TypeScript file of the repository (under tsx) in a child process with `env` added to this one's,
 * and resolves with everything it wrote (stdout and stderr, in order) and its exit code; SIGKILLed after
 * `killAfterMs`. For what only a fresh process shows (DEBUG is read when `debug` loads).
 */
export async function runTsChild(root: string, script: string, env: Record<string, string>, killAfterMs = 20_000): Promise<{ out: string; code: number | null }> {
  const proc = spawn(process.execPath, ['--require', 'tsx/cjs', script], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  captureOutput(proc, (chunk) => (out += chunk));
  const exited = once(proc, 'exit') as Promise<[number | null]>;
  const kill = setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
  const [code] = await exited;
  clearTimeout(kill);
  return { out, code };
}

/** The pids of this process's children whose command line holds `command` (pgrep -P). */
export function childPids(command: string): number[] {
  const r = spawnSync('pgrep', ['-P', String(process.pid), '-f', command], { encoding: 'utf8' });
  return (r.stdout ?? '').split('\n').filter(Boolean).map(Number);
}
