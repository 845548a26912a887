/**
 * A program the harness runs as a child process (baresip, linphonec, rtpengine, Kamailio): what it
 * writes kept as it comes, and its end asked for, forced when it does not come, and waited on.
 */
import type { ChildProcess } from 'node:child_process';

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
