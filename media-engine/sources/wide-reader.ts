/**
 * Frames from a 16-bit mono WAV above 8 kHz (a 16 kHz prompt, espeak-ng's 22,050 Hz speech, a 44.1 or
 * 48 kHz recording) for a wideband leg: read a second at a time, as FileFrameReader does, and converted
 * once to 16 kHz with libspeexdsp's resampler (one per reader, so seconds join without a seam): never
 * through 8 kHz. `readWideFrame` gives 20 ms at 16 kHz; `readFrame` (the leg turned narrowband while
 * it plays) brings that frame down to 8 kHz with a second resampler made then. Nothing is allocated
 * per frame.
 */
import fs from 'node:fs';
import { LITTLE_ENDIAN } from '../../core/audio/pcm16';
import { Resampler } from '../codecs';
import { parseWavHeader, readWavInfo, type WavFormat } from '../audio/wav';
import type { Frame, FrameSource } from '../dsp/frame';
import { openFrameReader, type FrameReaderOptions } from './file-reader';

/** The rate every wideband source gives its frames at. */
export const WIDE_RATE = 16000;
const WIDE_FRAME = WIDE_RATE / 50;

/** True for a WAV this reader plays: 16-bit PCM mono at a rate other than 8 kHz (the resampler's 1-192 kHz). */
export function isWideFormat(f: WavFormat): boolean {
  return f.encoding === 'pcm' && f.bitsPerSample === 16 && f.channels === 1 && f.sampleRate !== 8000 && f.sampleRate >= 1000 && f.sampleRate <= 192000;
}

export class WideFileReader implements FrameSource {
  readonly durationMs: number;
  /** the file's own rate */
  readonly fileRate: number;
  private fd: number;
  private readonly dataOffset: number;
  private readonly dataSamples: number;
  private pos: number; // next sample of the file to read
  private readonly chunk: Buffer; // one second of the file
  private readonly view: Int16Array;
  private readonly rs: Resampler | null; // fileRate -> 16 kHz (null when the file is 16 kHz)
  private readonly wide: Int16Array; // one second at 16 kHz
  private have = 0;
  private used = 0;
  private down: Resampler | null = null;
  private downFrame: Int16Array | null = null;

  constructor(
    readonly path: string,
    private readonly opts: FrameReaderOptions = {},
  ) {
    this.fd = fs.openSync(path, 'r');
    try {
      const size = fs.fstatSync(this.fd).size;
      const head = Buffer.alloc(Math.min(size, 65536));
      fs.readSync(this.fd, head, 0, head.length, 0);
      const info = parseWavHeader(head, size);
      if (!isWideFormat(info.format)) {
        const f = info.format;
        throw new Error(`${path} is ${f.encoding} ${f.bitsPerSample}-bit ${f.channels} ch ${f.sampleRate} Hz; run prepareAudio first`);
      }
      this.fileRate = info.format.sampleRate;
      this.dataOffset = info.dataOffset;
      this.dataSamples = info.frames;
    } catch (err) {
      fs.closeSync(this.fd);
      throw err;
    }
    this.chunk = Buffer.alloc(this.fileRate * 2);
    this.view = new Int16Array(this.chunk.buffer, this.chunk.byteOffset, this.fileRate);
    this.rs = this.fileRate === WIDE_RATE ? null : new Resampler(this.fileRate, WIDE_RATE);
    this.wide = this.rs ? new Int16Array(this.rs.outputLength(this.fileRate) + 64) : this.view;
    this.durationMs = (this.dataSamples * 1000) / this.fileRate;
    this.pos = Math.min(this.dataSamples, Math.round(((opts.startMs ?? 0) * this.fileRate) / 1000));
  }

  /** 20 ms at 16 kHz (320 samples) into `out`; false once the file is over. */
  readWideFrame(out: Int16Array): boolean {
    if (this.fd < 0) return false;
    let i = 0;
    while (i < WIDE_FRAME) {
      if (this.used === this.have && !this.refill()) {
        if (i === 0) return false;
        out.fill(0, i, WIDE_FRAME);
        return true;
      }
      const n = Math.min(WIDE_FRAME - i, this.have - this.used);
      const w = this.wide;
      for (let k = 0, from = this.used; k < n; k++) out[i + k] = w[from + k];
      this.used += n;
      i += n;
    }
    return true;
  }

  /** 20 ms at 8 kHz: the 16 kHz frame resampled down (the leg playing it turned narrowband). */
  readFrame(out: Frame): boolean {
    const f = (this.downFrame ??= new Int16Array(WIDE_FRAME));
    if (!this.readWideFrame(f)) return false;
    (this.down ??= new Resampler(WIDE_RATE, 8000)).process(f, out, WIDE_FRAME);
    return true;
  }

  get exhausted(): boolean {
    return this.fd < 0 || (!this.opts.loop && this.pos >= this.dataSamples && this.used === this.have);
  }

  close(): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
    this.rs?.close();
    this.down?.close();
    this.down = null;
  }

  /** The next second of the file, at 16 kHz. */
  private refill(): boolean {
    if (this.pos >= this.dataSamples) {
      if (!this.opts.loop || this.dataSamples === 0) return false;
      this.pos = 0;
    }
    const n = Math.min(this.fileRate, this.dataSamples - this.pos);
    const got = fs.readSync(this.fd, this.chunk, 0, n * 2, this.dataOffset + this.pos * 2) >> 1;
    if (got === 0) return false;
    if (!LITTLE_ENDIAN) for (let k = 0; k < got; k++) this.view[k] = this.chunk.readInt16LE(k * 2);
    this.pos += got;
    this.have = this.rs ? this.rs.process(this.view, this.wide, got) : got;
    this.used = 0;
    return this.have > 0 || this.refill();
  }
}

/** A prepared file (8 kHz, or above it for a wideband leg) as a frame source of the right kind. */
export function openPreparedReader(path: string, opts?: FrameReaderOptions): FrameSource {
  const info = readWavInfo(path);
  return isWideFormat(info.format) ? new WideFileReader(path, opts) : openFrameReader(path, opts);
}
