/**
 * The end of one sipp process, whoever started it (testkit/media-app/harness.ts, the drachtio suites'
 * harness): its output gathered, SIGKILL after `killAfterMs` whatever happens, and at its exit the
 * traces it wrote in its own directory read and the directory removed.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface SippResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Its *_errors.log (-trace_err). */
  errors: string;
  /** Its messages.log (-trace_msg), '' when it was not traced. */
  messages: string;
}

/** Resolves when `proc` (run in `dir`) exits; `onExit` runs first (the caller forgets the process there). */
export function sippResult(proc: ChildProcess, dir: string, o: { killAfterMs?: number; messages: boolean; onExit: () => void }): Promise<SippResult> {
  let stdout = '';
  let stderr = '';
  proc.stdout?.on('data', (d) => (stdout += d));
  proc.stderr?.on('data', (d) => (stderr += d));
  const killer = setTimeout(() => proc.kill('SIGKILL'), o.killAfterMs ?? 25_000);
  return new Promise<SippResult>((resolve) => {
    proc.on('exit', (code) => {
      clearTimeout(killer);
      o.onExit();
      const read = (suffix: string) =>
        fs
          .readdirSync(dir)
          .filter((f) => f.endsWith(suffix))
          .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
          .join('\n');
      const result = { code, stdout, stderr, errors: read('_errors.log'), messages: o.messages ? read('messages.log') : '' };
      fs.rmSync(dir, { recursive: true, force: true });
      resolve(result);
    });
  });
}
