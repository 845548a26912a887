/**
 * WAV files: a reader for the formats telephony meets (PCM 8/16/24/32-bit, float, µ-law, A-law,
 * WAVE_FORMAT_EXTENSIBLE; any rate and channel count) and a streaming writer for recordings.
 *
 * The writer writes a complete header first and rewrites the two size fields after every flush,
 * so a recording cut short by a crash or a kill is still a valid WAV holding everything flushed.
 */
import { LITTLE_ENDIAN } from '../../core/audio/pcm16';
import { wavHeader } from '../../core/audio/wav';
import fs from 'node:fs';

export type WavEncoding = 'pcm' | 'float' | 'alaw' | 'mulaw';

export interface WavFormat {
  encoding: WavEncoding;
  /** The fmt chunk's format tag (1 PCM, 3 float, 6 A-law, 7 µ-law; 0xFFFE resolved to its subformat). */
  formatTag: number;
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  blockAlign: number;
}

export interface WavInfo {
  format: WavFormat;
  /** Byte offset of the audio data in the file. */
  dataOffset: number;
  /** Bytes of audio data (clamped to what the file really holds). */
  dataBytes: number;
  /** Sample frames (one sample per channel each). */
  frames: number;
  durationMs: number;
}

export class WavError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WavError';
  }
}

const TAGS: Record<number, WavEncoding> = { 1: 'pcm', 3: 'float', 6: 'alaw', 7: 'mulaw' };

/**
 * Parse a WAV header from the start of a file. `fileSize` (when known) clamps the data size, which
 * makes files with unpatched (0 or 0xFFFFFFFF) sizes readable too.
 */
export function parseWavHeader(head: Buffer, fileSize = head.length): WavInfo {
  if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') {
    throw new WavError('not a WAV file (no RIFF/WAVE header)');
  }
  let pos = 12;
  let format: WavFormat | null = null;
  while (pos + 8 <= head.length) {
    const id = head.toString('latin1', pos, pos + 4);
    const size = head.readUInt32LE(pos + 4);
    const body = pos + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > head.length) throw new WavError('WAV fmt chunk truncated');
      let tag = head.readUInt16LE(body);
      if (tag === 0xfffe && size >= 40 && body + 26 <= head.length) tag = head.readUInt16LE(body + 24); // subformat GUID's first 2 bytes
      const encoding = TAGS[tag];
      if (!encoding) throw new WavError(`unsupported WAV format tag ${tag}`);
      format = {
        encoding,
        formatTag: tag,
        channels: head.readUInt16LE(body + 2),
        sampleRate: head.readUInt32LE(body + 4),
        blockAlign: head.readUInt16LE(body + 12),
        bitsPerSample: head.readUInt16LE(body + 14),
      };
      const okBits =
        (encoding === 'pcm' && [8, 16, 24, 32].includes(format.bitsPerSample)) ||
        (encoding === 'float' && [32, 64].includes(format.bitsPerSample)) ||
        ((encoding === 'alaw' || encoding === 'mulaw') && format.bitsPerSample === 8);
      if (!okBits || format.channels < 1 || format.sampleRate < 1) {
        throw new WavError(`unsupported WAV: ${encoding} ${format.bitsPerSample}-bit, ${format.channels} ch, ${format.sampleRate} Hz`);
      }
      format.blockAlign ||= (format.bitsPerSample / 8) * format.channels;
    } else if (id === 'data') {
      if (!format) throw new WavError('WAV data chunk before fmt chunk');
      const avail = Math.max(0, fileSize - body);
      const declared = size === 0 || size === 0xffffffff ? avail : size;
      const dataBytes = Math.min(declared, avail) - (Math.min(declared, avail) % format.blockAlign);
      const frames = dataBytes / format.blockAlign;
      return { format, dataOffset: body, dataBytes, frames, durationMs: (frames * 1000) / format.sampleRate };
    }
    pos = body + size + (size & 1);
  }
  throw new WavError(format ? 'WAV has no data chunk' : 'WAV has no fmt chunk');
}

/** Read and parse the header of a WAV file (reads at most 64 KB). */
export function readWavInfo(path: string): WavInfo {
  const fd = fs.openSync(path, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const head = Buffer.alloc(Math.min(size, 65536));
    fs.readSync(fd, head, 0, head.length, 0);
    return parseWavHeader(head, size);
  } finally {
    fs.closeSync(fd);
  }
}

/** Whole file decoded to 16-bit linear, channels still interleaved. */
export function readWav(path: string): { info: WavInfo; samples: Int16Array } {
  return parseWav(fs.readFileSync(path));
}

/** A WAV file's bytes decoded to 16-bit linear, channels still interleaved. */
export function parseWav(buf: Buffer): { info: WavInfo; samples: Int16Array } {
  const info = parseWavHeader(buf.subarray(0, Math.min(buf.length, 65536)), buf.length);
  return { info, samples: decodeToInt16(buf.subarray(info.dataOffset, info.dataOffset + info.dataBytes), info.format) };
}

/** True when the file is already what the engine plays natively: PCM 16-bit mono 8 kHz. */
export function isEngineFormat(f: WavFormat): boolean {
  return f.encoding === 'pcm' && f.bitsPerSample === 16 && f.channels === 1 && f.sampleRate === 8000;
}

export function ulawToLinear(u: number): number {
  u = ~u & 0xff;
  const t = (((u & 0x0f) << 3) + 0x84) << ((u & 0x70) >> 4);
  return u & 0x80 ? 0x84 - t : t - 0x84;
}

export function alawToLinear(a: number): number {
  a ^= 0x55;
  const seg = (a & 0x70) >> 4;
  let t = (a & 0x0f) << 4;
  t = seg === 0 ? t + 8 : seg === 1 ? t + 0x108 : (t + 0x108) << (seg - 1);
  return a & 0x80 ? t : -t;
}

/** Decode raw WAV data bytes of the given format to 16-bit linear samples. */
export function decodeToInt16(data: Buffer, f: WavFormat): Int16Array {
  const bytes = f.bitsPerSample / 8;
  const n = Math.floor(data.length / bytes);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const o = i * bytes;
    let v: number;
    if (f.encoding === 'mulaw') v = ulawToLinear(data[o]);
    else if (f.encoding === 'alaw') v = alawToLinear(data[o]);
    else if (f.encoding === 'float') v = Math.round((bytes === 4 ? data.readFloatLE(o) : data.readDoubleLE(o)) * 32767);
    else if (bytes === 1) v = (data[o] - 128) << 8;
    else if (bytes === 2) v = data.readInt16LE(o);
    else if (bytes === 3) v = data.readIntLE(o, 3) >> 8;
    else v = data.readInt32LE(o) >> 16;
    out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
  }
  return out;
}

/** Write a whole 16-bit mono WAV in one go (fixtures, TTS output). */
export function writeWav(path: string, samples: Int16Array, sampleRate = 8000): void {
  const body = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  fs.writeFileSync(path, Buffer.concat([wavHeader(body.length, sampleRate), body]));
}

export interface WavWriterOptions {
  sampleRate?: number; // default 8000
  /** Audio buffered before it is written and the header patched, ms. Default 1000. */
  flushIntervalMs?: number;
}

export interface WavSummary {
  path: string;
  durationMs: number;
  samples: number;
  /** Max |sample| / 32768 per bucket, 0.0–1.0. */
  peaks: number[];
}

/**
 * Streaming recorder: `write(frame)` per tick, `close()` at the end. Writes are synchronous and
 * batched (one write plus two 4-byte header patches per `flushIntervalMs`), so a crash loses at most
 * that much audio and never the file's validity.
 */
export class WavWriter {
  private fd: number;
  private readonly buf: Buffer;
  private readonly view: Int16Array;
  private fill = 0; // samples buffered
  private written = 0; // samples on disk
  private framePeaks = new Uint16Array(3000); // max |sample| per written frame (grows)
  private frames = 0;
  private readonly sampleRate: number;
  private readonly patch = Buffer.alloc(4);

  constructor(
    readonly path: string,
    opts: WavWriterOptions = {},
  ) {
    this.sampleRate = opts.sampleRate ?? 8000;
    const bufSamples = Math.max(160, Math.round(((opts.flushIntervalMs ?? 1000) * this.sampleRate) / 1000));
    this.buf = Buffer.alloc(bufSamples * 2);
    this.view = new Int16Array(this.buf.buffer, this.buf.byteOffset, bufSamples);
    this.fd = fs.openSync(path, 'w');
    fs.writeSync(this.fd, wavHeader(0, this.sampleRate), 0, 44, 0);
  }

  get durationMs(): number {
    return ((this.written + this.fill) * 1000) / this.sampleRate;
  }

  /** Append samples (normally one 160-sample frame). */
  write(frame: Int16Array): void {
    if (this.fd < 0) throw new Error('WavWriter: write after close');
    let peak = 0;
    for (let i = 0; i < frame.length; i++) {
      const s = frame[i];
      const a = s < 0 ? -s : s;
      if (a > peak) peak = a;
    }
    if (this.frames === this.framePeaks.length) {
      const grown = new Uint16Array(this.framePeaks.length * 2);
      grown.set(this.framePeaks);
      this.framePeaks = grown;
    }
    this.framePeaks[this.frames++] = peak;
    let off = 0;
    while (off < frame.length) {
      const n = Math.min(frame.length - off, this.view.length - this.fill);
      if (LITTLE_ENDIAN) this.view.set(frame.subarray(off, off + n), this.fill);
      else for (let i = 0; i < n; i++) this.buf.writeInt16LE(frame[off + i], (this.fill + i) * 2);
      this.fill += n;
      off += n;
      if (this.fill === this.view.length) this.flush();
    }
  }

  /** Write buffered audio and patch the header sizes. */
  flush(): void {
    if (this.fd < 0 || this.fill === 0) return;
    fs.writeSync(this.fd, this.buf, 0, this.fill * 2, 44 + this.written * 2);
    this.written += this.fill;
    this.fill = 0;
    const bytes = this.written * 2;
    this.patch.writeUInt32LE(36 + bytes, 0);
    fs.writeSync(this.fd, this.patch, 0, 4, 4);
    this.patch.writeUInt32LE(bytes, 0);
    fs.writeSync(this.fd, this.patch, 0, 4, 40);
  }

  /** Flush, close, and summarise: duration and `peakBuckets` waveform peaks (0.0–1.0). */
  close(peakBuckets = 100): WavSummary {
    if (this.fd >= 0) {
      this.flush();
      fs.closeSync(this.fd);
      this.fd = -1;
    }
    return { path: this.path, durationMs: this.durationMs, samples: this.written, peaks: bucketPeaks(this.framePeaks.subarray(0, this.frames), peakBuckets) };
  }
}

/** Reduce per-frame peaks (0..32768) to `buckets` maxima in 0.0–1.0 (fewer if there are fewer frames). */
export function bucketPeaks(framePeaks: ArrayLike<number>, buckets: number): number[] {
  const n = framePeaks.length;
  const b = Math.max(0, Math.min(buckets, n));
  const out: number[] = [];
  for (let k = 0; k < b; k++) {
    const from = Math.floor((k * n) / b);
    const to = Math.floor(((k + 1) * n) / b);
    let m = 0;
    for (let i = from; i < to; i++) if (framePeaks[i] > m) m = framePeaks[i];
    out.push(Math.round((m / 32768) * 1000) / 1000);
  }
  return out;
}

/** Peaks of a whole sample array (e.g. a file read back), in `buckets` buckets. */
export function peaksOf(samples: Int16Array, buckets: number): number[] {
  const frames = Math.ceil(samples.length / 160);
  const fp = new Uint16Array(frames);
  for (let i = 0; i < samples.length; i++) {
    const a = Math.abs(samples[i]);
    const f = (i / 160) | 0;
    if (a > fp[f]) fp[f] = a;
  }
  return bucketPeaks(fp, buckets);
}

export { wavHeader };
