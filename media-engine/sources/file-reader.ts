/**
 * Frames from an 8 kHz 16-bit mono file (a WAV from prepareAudio, or headerless .raw/.sln):
 * a FrameSource that reads one second at a time with a synchronous read, so the 20 ms tick never
 * waits on I/O more than once a second and allocates nothing per frame.
 */
import fs from 'node:fs';
import { LITTLE_ENDIAN } from '../../core/audio/pcm16';
import { isEngineFormat, parseWavHeader } from '../audio/wav';
import { FRAME_SAMPLES, type Frame, type FrameSource } from '../dsp/frame';

export interface FrameReaderOptions {
  /** Start again at the end (hold music). Default false. */
  loop?: boolean;
  /** Skip this much audio first, ms. */
  startMs?: number;
}

const CHUNK_SAMPLES = 8000;
const N = FRAME_SAMPLES;

export class FileFrameReader implements FrameSource {
  readonly durationMs: number;
  private fd: number;
  private readonly dataOffset: number;
  private readonly dataSamples: number;
  private pos: number; // next sample to read from the file
  private readonly chunk = Buffer.alloc(CHUNK_SAMPLES * 2);
  private readonly view = new Int16Array(this.chunk.buffer, this.chunk.byteOffset, CHUNK_SAMPLES);
  /** the chunk's whole frames as views made once: a frame on a frame boundary is one copy (memcpy), not a loop */
  private readonly frames = Array.from({ length: CHUNK_SAMPLES / N }, (_, k) => this.view.subarray(k * N, (k + 1) * N));
  private have = 0; // samples in chunk
  private used = 0; // samples consumed from chunk

  constructor(
    readonly path: string,
    private readonly opts: FrameReaderOptions = {},
  ) {
    this.fd = fs.openSync(path, 'r');
    try {
      const size = fs.fstatSync(this.fd).size;
      if (/\.(raw|sln|s16)$/i.test(path)) {
        this.dataOffset = 0;
        this.dataSamples = size >> 1;
      } else {
        const head = Buffer.alloc(Math.min(size, 65536));
        fs.readSync(this.fd, head, 0, head.length, 0);
        const info = parseWavHeader(head, size);
        if (!isEngineFormat(info.format)) {
          const f = info.format;
          throw new Error(`${path} is ${f.encoding} ${f.bitsPerSample}-bit ${f.channels} ch ${f.sampleRate} Hz; run prepareAudio first`);
        }
        this.dataOffset = info.dataOffset;
        this.dataSamples = info.frames;
      }
    } catch (err) {
      fs.closeSync(this.fd);
      throw err;
    }
    this.durationMs = this.dataSamples / 8;
    this.pos = Math.min(this.dataSamples, Math.round((opts.startMs ?? 0) * 8));
  }

  readFrame(out: Frame): boolean {
    if (this.fd < 0) return false;
    const used = this.used;
    if (this.have - used >= N && used % N === 0) {
      out.set(this.frames[used / N]);
      this.used = used + N;
      return true;
    }
    let i = 0;
    while (i < N) {
      if (this.used === this.have && !this.refill()) {
        if (i === 0) return false;
        out.fill(0, i);
        return true;
      }
      const n = Math.min(N - i, this.have - this.used);
      const view = this.view;
      for (let k = 0, from = this.used; k < n; k++) out[i + k] = view[from + k];
      this.used += n;
      i += n;
    }
    return true;
  }

  get exhausted(): boolean {
    return this.fd < 0 || (!this.opts.loop && this.pos >= this.dataSamples && this.used === this.have);
  }

  /** Jump back to the start. */
  rewind(): void {
    this.pos = 0;
    this.have = this.used = 0;
  }

  close(): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
  }

  private refill(): boolean {
    if (this.pos >= this.dataSamples) {
      if (!this.opts.loop || this.dataSamples === 0) return false;
      this.pos = 0;
    }
    const n = Math.min(CHUNK_SAMPLES, this.dataSamples - this.pos);
    const got = fs.readSync(this.fd, this.chunk, 0, n * 2, this.dataOffset + this.pos * 2) >> 1;
    if (got === 0) return false;
    if (!LITTLE_ENDIAN) for (let k = 0; k < got; k++) this.view[k] = this.chunk.readInt16LE(k * 2);
    this.pos += got;
    this.have = got;
    this.used = 0;
    return true;
  }
}

/** Open a prepared file as a frame source. */
export function openFrameReader(path: string, opts?: FrameReaderOptions): FileFrameReader {
  return new FileFrameReader(path, opts);
}
