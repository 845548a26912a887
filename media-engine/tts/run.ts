// Run a synthesiser whose stdout (or output file) goes through sox to 8 kHz 16-bit mono WAV (or, for a
// wideband prompt, 16-bit mono at the synthesiser's own rate).
import { spawn, type ChildProcess } from 'node:child_process';
import { TtsError } from './provider';

const SOX_OUT = ['-r', '8000', '-b', '16', '-c', '1', '-e', 'signed-integer', '-t', 'wav'];
const SOX_OUT_KEEP_RATE = SOX_OUT.slice(2);

function collect(child: ChildProcess, label: string): Promise<void> {
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  return new Promise((resolve, reject) => {
    child.on('error', (e) => reject(new TtsError('SYNTHESIS_FAILED', `cannot run ${label}: ${e.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new TtsError('SYNTHESIS_FAILED', `${label} failed (${signal ?? code}): ${err.trim().split('\n').pop() ?? ''}`));
    });
  });
}

async function withTimeout<T>(p: Promise<T>, ms: number, kids: ChildProcess[], label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      for (const k of kids) k.kill('SIGKILL');
      reject(new TtsError('TIMEOUT', `${label} took longer than ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

/** `cmd args` writes WAV to stdout (text fed on stdin); sox converts it into `outPath`. */
export async function pipeThroughSox(cmd: string, args: string[], stdinText: string, outPath: string, timeoutMs: number, keepRate = false): Promise<void> {
  const synth = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const sox = spawn('sox', ['-V1', '-t', 'wav', '-', ...(keepRate ? SOX_OUT_KEEP_RATE : SOX_OUT), outPath], { stdio: ['pipe', 'ignore', 'pipe'] });
  synth.stdout!.pipe(sox.stdin!);
  sox.stdin!.on('error', () => {}); // sox dying is reported by its exit code
  synth.stdin!.on('error', () => {});
  synth.stdin!.end(stdinText);
  await withTimeout(Promise.all([collect(synth, cmd), collect(sox, 'sox')]), timeoutMs, [synth, sox], cmd);
}

/** Convert any WAV file sox reads into 8 kHz 16-bit mono at `outPath` (`keepRate`: at its own rate). */
export async function soxToEngine(input: string, outPath: string, timeoutMs: number, keepRate = false): Promise<void> {
  const sox = spawn('sox', ['-V1', input, ...(keepRate ? SOX_OUT_KEEP_RATE : SOX_OUT), outPath], { stdio: ['ignore', 'ignore', 'pipe'] });
  await withTimeout(collect(sox, 'sox'), timeoutMs, [sox], 'sox');
}

/** Run a command to completion (output to files). */
export async function runCommand(cmd: string, args: string[], timeoutMs: number): Promise<void> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  await withTimeout(collect(child, cmd), timeoutMs, [child], cmd);
}
