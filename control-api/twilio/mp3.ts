/**
 * A recording's MP3, transcoded by sox on the fly (`.mp3` of the Recordings resource). The response's
 * status is decided by sox's first bytes: a sox that cannot start (not installed, no process slot) or ends
 * without output (no MP3 support, a damaged file) is an error the caller reports in Twilio's envelope,
 * never a 200 with an empty body, and never an unhandled 'error' event that ends the API process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

export class Mp3Unavailable extends Error {
  constructor(why: string) {
    super(`The recording could not be converted to MP3 (${why})`);
    this.name = 'Mp3Unavailable';
  }
}

export interface Mp3 {
  /** the MP3 from its first chunk on (that chunk is put back) */
  readonly stream: Readable;
  /** ends sox (the client went away) */
  kill(): void;
  /** resolves when sox has ended, either way */
  readonly ended: Promise<void>;
}

/** sox's MP3 of `file` once it wrote its first bytes; rejects with Mp3Unavailable when it cannot start or ends with none. */
export function mp3Of(file: string, command = 'sox'): Promise<Mp3> {
  const child: ChildProcess = spawn(command, ['-V1', file, '-t', 'mp3', '-'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout = child.stdout!;
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-300)));
  const ended = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return new Promise<Mp3>((resolve, reject) => {
    const fail = (why: string) => {
      stdout.off('readable', first);
      reject(new Mp3Unavailable(why));
    };
    // handlers before anything can fail: a spawn error (ENOENT, EAGAIN) comes as 'error', never thrown
    child.once('error', (err: NodeJS.ErrnoException) => fail(`sox did not start: ${err.code ?? err.message}`));
    stdout.on('error', () => child.kill('SIGKILL'));
    child.once('close', (code, signal) => fail(`sox ended with ${signal ?? `exit ${code}`} and no output${stderr.trim() ? `: ${stderr.trim()}` : ''}`));
    function first(): void {
      const chunk = stdout.read() as Buffer | null;
      if (chunk === null) return;
      stdout.off('readable', first);
      stdout.unshift(chunk);
      resolve({ stream: stdout, kill: () => child.kill('SIGKILL'), ended });
    }
    stdout.on('readable', first);
  });
}
