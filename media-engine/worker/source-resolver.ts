/**
 * Turns a play request (file path, http(s) URL, silence/tone stream, text to say) into a FrameSource
 * of 8 kHz 16-bit mono frames. Files in other formats and MP3 go through sox; URLs and speech are
 * cached in memory by their key.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FRAME_SAMPLES, type Frame, type FrameSource } from '../dsp/frame';
import { beep, dtmfTones, ringback, silence } from '../dsp/tones';

export type SourceSpec = string | { say: string; language?: string; voice?: string };

/** Plays a PCM buffer frame by frame (the last frame zero-padded). */
export class PcmSource implements FrameSource {
  private pos = 0;
  constructor(private readonly pcm: Int16Array) {}
  readFrame(out: Frame): boolean {
    if (this.pos >= this.pcm.length) return false;
    const n = Math.min(FRAME_SAMPLES, this.pcm.length - this.pos);
    out.set(this.pcm.subarray(this.pos, this.pos + n));
    if (n < FRAME_SAMPLES) out.fill(0, n);
    this.pos += n;
    return true;
  }
  close(): void {
    this.pos = this.pcm.length;
  }
}

const cache = new Map<string, Int16Array>();
const CACHE_LIMIT_SAMPLES = 8000 * 60 * 30; // ~ 30 minutes of audio (~ 29 MB)
let cachedSamples = 0;

function remember(key: string, pcm: Int16Array): Int16Array {
  if (pcm.length > CACHE_LIMIT_SAMPLES / 4) return pcm;
  cache.set(key, pcm);
  cachedSamples += pcm.length;
  for (const [k, v] of cache) {
    if (cachedSamples <= CACHE_LIMIT_SAMPLES) break;
    cache.delete(k);
    cachedSamples -= v.length;
  }
  return pcm;
}

function run(cmd: string, args: string[], input?: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    p.stdout.on('data', (d: Buffer) => out.push(d));
    p.stderr.on('data', (d: Buffer) => err.push(d));
    p.on('error', reject);
    p.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new Error(`${cmd} failed (${code}): ${Buffer.concat(err).toString().trim().slice(0, 300)}`));
    });
    p.stdin.on('error', () => {});
    p.stdin.end(input);
  });
}

function toInt16(buf: Buffer): Int16Array {
  const copy = new Int16Array(buf.length >> 1);
  for (let i = 0; i < copy.length; i++) copy[i] = buf.readInt16LE(i * 2);
  return copy;
}

/** 8 kHz 16-bit mono PCM WAVs are read directly; everything else is converted by sox. */
async function decodeFile(file: string): Promise<Int16Array> {
  let data: Buffer;
  try {
    data = await fs.readFile(file);
  } catch {
    throw new Error(`File Not Found: ${file}`);
  }
  if (data.length >= 44 && data.toString('ascii', 0, 4) === 'RIFF' && data.toString('ascii', 8, 12) === 'WAVE') {
    let off = 12;
    let fmt: { format: number; channels: number; rate: number; bits: number } | null = null;
    while (off + 8 <= data.length) {
      const id = data.toString('ascii', off, off + 4);
      const size = data.readUInt32LE(off + 4);
      if (id === 'fmt ') fmt = { format: data.readUInt16LE(off + 8), channels: data.readUInt16LE(off + 10), rate: data.readUInt32LE(off + 12), bits: data.readUInt16LE(off + 22) };
      if (id === 'data' && fmt && fmt.format === 1 && fmt.channels === 1 && fmt.rate === 8000 && fmt.bits === 16) {
        const end = Math.min(data.length, off + 8 + size);
        return toInt16(data.subarray(off + 8, end - ((end - off - 8) & 1)));
      }
      off += 8 + size + (size & 1);
    }
  }
  const pcm = await run('sox', ['-V1', file, '-t', 'raw', '-r', '8000', '-e', 'signed-integer', '-b', '16', '-c', '1', '-']);
  return toInt16(pcm);
}

async function fetchUrl(url: string): Promise<Int16Array> {
  const res = await fetch(url, { signal: AbortSignal.timeout(15000) });
  if (!res.ok) throw new Error(`File Not Found: ${url} (HTTP ${res.status})`);
  const body = Buffer.from(await res.arrayBuffer());
  const ext = path.extname(new URL(url).pathname).toLowerCase() || '.wav';
  const tmp = path.join(os.tmpdir(), `me-url-${process.pid}-${Math.random().toString(36).slice(2)}${ext}`);
  await fs.writeFile(tmp, body);
  try {
    return await decodeFile(tmp);
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

async function speak(text: string, language?: string, voice?: string): Promise<Int16Array> {
  const args = ['--stdout'];
  const v = voice || language;
  if (v) args.push('-v', v);
  if (/^\s*<speak[\s>]/i.test(text)) args.push('-m');
  args.push(text);
  const wav = await run('espeak-ng', args);
  return toInt16(await run('sox', ['-V1', '-t', 'wav', '-', '-t', 'raw', '-r', '8000', '-e', 'signed-integer', '-b', '16', '-c', '1', '-'], wav));
}

/** Resolves a play request to a frame source. Rejects with "File Not Found" for missing files. */
export async function resolveSource(spec: SourceSpec): Promise<FrameSource> {
  if (typeof spec === 'object' && spec && typeof spec.say === 'string') {
    const key = `say|${spec.language ?? ''}|${spec.voice ?? ''}|${spec.say}`;
    const hit = cache.get(key);
    return new PcmSource(hit ?? remember(key, await speak(spec.say, spec.language, spec.voice)));
  }
  if (typeof spec !== 'string' || !spec) throw new Error('invalid play source');
  const silenceMatch = /^silence_stream:\/\/(\d+)/.exec(spec);
  if (silenceMatch) return silence(Number(silenceMatch[1]));
  const tone = /^tone_stream:\/\/(beep|ringback|dtmf:([0-9A-D*#]+))$/i.exec(spec);
  if (tone) {
    if (tone[1].toLowerCase() === 'beep') return beep();
    if (tone[1].toLowerCase() === 'ringback') return ringback();
    return dtmfTones(tone[2]);
  }
  if (/^https?:\/\//i.test(spec)) {
    const hit = cache.get(spec);
    return new PcmSource(hit ?? remember(spec, await fetchUrl(spec)));
  }
  return new PcmSource(await decodeFile(spec.startsWith('file://') ? spec.slice(7) : spec));
}
