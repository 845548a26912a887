/**
 * sox as the converter for anything the engine cannot play natively (WAV of other encodings/rates,
 * MP3, Ogg, FLAC, AU, raw G.711). Output is 8 kHz 16-bit signed mono WAV (or, for a wideband leg, the
 * input's own rate).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { AudioSourceError } from './errors';

/** sox type names by magic bytes; null when the header says nothing we recognise. */
export function sniffAudioType(head: Buffer): string | null {
  const s = head.toString('latin1', 0, 4);
  if (s === 'RIFF' && head.toString('latin1', 8, 12) === 'WAVE') return 'wav';
  if (s === 'OggS') return 'ogg';
  if (s === 'fLaC') return 'flac';
  if (s === '.snd') return 'au';
  if (s.startsWith('ID3')) return 'mp3';
  if (s === 'FORM' && /AIF[FC]/.test(head.toString('latin1', 8, 12))) return 'aiff';
  if (head.length >= 2 && head[0] === 0xff && (head[1] & 0xe0) === 0xe0) return 'mp3'; // MPEG frame sync
  return null;
}

/** Headerless formats recognised by extension: sox type plus the input options they need. */
const RAW_BY_EXT: Record<string, string[]> = {
  ul: ['-t', 'ul', '-r', '8000', '-c', '1'],
  ulaw: ['-t', 'ul', '-r', '8000', '-c', '1'],
  pcmu: ['-t', 'ul', '-r', '8000', '-c', '1'],
  al: ['-t', 'al', '-r', '8000', '-c', '1'],
  alaw: ['-t', 'al', '-r', '8000', '-c', '1'],
  pcma: ['-t', 'al', '-r', '8000', '-c', '1'],
  sln: ['-t', 's16', '-r', '8000', '-c', '1'],
  raw: ['-t', 's16', '-r', '8000', '-c', '1'],
};

const KNOWN_EXT = new Set(['wav', 'mp3', 'ogg', 'oga', 'flac', 'au', 'snd', 'aiff', 'aif', 'gsm']);

/** sox input options for a file: from its magic bytes, else its extension; null when unknown. */
export function soxInputArgs(path: string, head: Buffer): string[] | null {
  const sniffed = sniffAudioType(head);
  if (sniffed) return ['-t', sniffed];
  const ext = (path.split('.').pop() ?? '').toLowerCase();
  if (RAW_BY_EXT[ext]) return RAW_BY_EXT[ext];
  if (KNOWN_EXT.has(ext)) return ['-t', ext === 'oga' ? 'ogg' : ext === 'aif' ? 'aiff' : ext];
  return null;
}

/**
 * Convert `input` to an 8 kHz 16-bit mono WAV at `output` (written to a temp name, then renamed);
 * with `keepRate`, a 16-bit mono WAV at the input's own rate (a wideband leg's reader resamples it).
 */
export async function convertToEngineWav(input: string, output: string, opts: { timeoutMs?: number; keepRate?: boolean } = {}): Promise<void> {
  const head = Buffer.alloc(16);
  const fd = fs.openSync(input, 'r');
  try {
    fs.readSync(fd, head, 0, 16, 0);
  } finally {
    fs.closeSync(fd);
  }
  const inArgs = soxInputArgs(input, head);
  if (!inArgs) throw new AudioSourceError('UNSUPPORTED_FORMAT', `unrecognised audio format: ${input}`, input);
  const tmp = `${output}.${process.pid}.${Date.now()}.tmp`;
  // -G: guard against clipping from resampling; -V1: errors only.
  const args = ['-V1', '-G', ...inArgs, input, ...(opts.keepRate ? [] : ['-r', '8000']), '-b', '16', '-c', '1', '-e', 'signed-integer', '-t', 'wav', tmp];
  try {
    await runSox(args, opts.timeoutMs ?? 30000, input);
    fs.renameSync(tmp, output);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

function runSox(args: string[], timeoutMs: number, source: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sox', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()).length > 4000 && (stderr = stderr.slice(-4000)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new AudioSourceError('TIMEOUT', `sox took longer than ${timeoutMs} ms converting ${source}`, source));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new AudioSourceError('CONVERSION_FAILED', `cannot run sox: ${err.message}`, source));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else {
        const msg = stderr.trim().split('\n').pop() || `exit code ${code}`;
        reject(new AudioSourceError('CONVERSION_FAILED', `sox could not convert ${source}: ${msg}`, source));
      }
    });
  });
}
