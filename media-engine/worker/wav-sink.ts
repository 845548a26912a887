/**
 * A streaming 16-bit mono WAV file at 8 kHz (or the rate given: 16 kHz for a wideband leg). Audio is buffered for about a second, appended, and the
 * RIFF/data sizes are rewritten after every append, so the file on disk is always a valid WAV of
 * everything flushed so far, even when the process dies mid-recording.
 */
import fs from 'node:fs';
import { wavHeader } from '../../core/audio/wav';

export class WavSink {
  private fd: number;
  // a fresh (unpooled) buffer, so the Int16Array view below is aligned; WAV is little-endian like the hosts we run on
  private readonly flushSamples: number;
  private buf: Buffer;
  private view: Int16Array;
  private bufLen = 0;
  private flushAt: number;
  private dataBytes = 0;
  private readonly head: Buffer;
  private closed = false;
  /** peak |sample| per 100 ms, for the waveform at the end */
  /** (a typed array doubled when full: an array push per bucket reallocates its store now and then) */
  private peakBuckets = new Uint16Array(256);
  private bucketCount = 0;
  private bucketPeak = 0;
  private bucketFill = 0;

  constructor(
    readonly path: string,
    readonly rate = 8000,
  ) {
    this.flushSamples = rate; // about a second
    this.buf = Buffer.alloc(this.flushSamples * 2 + (rate / 25) * 2);
    this.view = new Int16Array(this.buf.buffer, this.buf.byteOffset, this.buf.length >> 1);
    // the first flush comes at a random fill, so recordings started together do not all write in one tick
    this.flushAt = Math.floor(this.flushSamples * (0.25 + 0.75 * Math.random())) * 2;
    this.head = wavHeader(0, rate);
    this.fd = fs.openSync(path, 'w');
    fs.writeSync(this.fd, this.head, 0, 44, 0);
  }

  write(frame: Int16Array): void {
    if (this.closed) return;
    this.view.set(frame, this.bufLen >> 1);
    this.bufLen += frame.length * 2;
    let peak = this.bucketPeak;
    for (let i = 0; i < frame.length; i++) {
      const s = frame[i];
      const a = s < 0 ? -s : s;
      if (a > peak) peak = a;
    }
    this.bucketPeak = peak;
    this.afterWrite(frame.length);
  }

  /**
   * Writes `input` + `output` (clipped; either may be null: silence) as one frame of `n` samples, mixed
   * straight into the file's buffer; returns the sum of |input| (a recorder's silence measure).
   */
  writeMixed(input: Int16Array | null, output: Int16Array | null, n: number): number {
    const v = this.view;
    const at = this.bufLen >> 1;
    let peak = this.bucketPeak;
    let sum = 0;
    if (input !== null && output !== null) {
      for (let i = 0; i < n; i++) {
        const a = input[i];
        let s = a + output[i];
        s = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
        v[at + i] = s;
        sum += a < 0 ? -a : a;
        const m = s < 0 ? -s : s;
        if (m > peak) peak = m;
      }
    } else {
      const src = input ?? output;
      let all = 0;
      for (let i = 0; i < n; i++) {
        const s = src === null ? 0 : src[i];
        v[at + i] = s;
        const m = s < 0 ? -s : s;
        all += m;
        if (m > peak) peak = m;
      }
      if (input !== null) sum = all;
    }
    if (this.closed) return sum;
    this.bufLen += n * 2;
    this.bucketPeak = peak;
    this.afterWrite(n);
    return sum;
  }

  private afterWrite(n: number): void {
    this.bucketFill += n;
    if (this.bucketFill >= this.rate / 10) {
      this.pushPeak();
      this.bucketPeak = 0;
      this.bucketFill = 0;
    }
    if (this.bufLen >= this.flushAt) this.flush();
  }

  private pushPeak(): void {
    if (this.bucketCount === this.peakBuckets.length) {
      const grown = new Uint16Array(this.peakBuckets.length * 2);
      grown.set(this.peakBuckets);
      this.peakBuckets = grown;
    }
    this.peakBuckets[this.bucketCount++] = Math.min(65535, this.bucketPeak);
  }

  private flush(): void {
    if (this.bufLen === 0) return;
    fs.writeSync(this.fd, this.buf, 0, this.bufLen, 44 + this.dataBytes);
    this.dataBytes += this.bufLen;
    this.bufLen = 0;
    this.flushAt = this.flushSamples * 2;
    this.head.writeUInt32LE(36 + this.dataBytes, 4);
    this.head.writeUInt32LE(this.dataBytes, 40);
    fs.writeSync(this.fd, this.head, 0, 44, 0);
  }

  get samples(): number {
    return (this.dataBytes + this.bufLen) / 2;
  }

  /** Closes the file; returns its duration in seconds and up to `points` peaks in 0..1. */
  close(points = 100): { duration: number; peaks: number[] } {
    if (!this.closed) {
      this.flush();
      fs.closeSync(this.fd);
      this.closed = true;
      if (this.bucketFill) this.pushPeak();
    }
    const b = this.peakBuckets.subarray(0, this.bucketCount);
    const n = Math.min(points, b.length);
    const peaks: number[] = [];
    for (let i = 0; i < n; i++) {
      const from = Math.floor((i * b.length) / n);
      const to = Math.max(from + 1, Math.floor(((i + 1) * b.length) / n));
      let m = 0;
      for (let k = from; k < to; k++) m = Math.max(m, b[k]);
      peaks.push(Math.round((m / 32768) * 1000) / 1000);
    }
    return { duration: this.dataBytes / 2 / this.rate, peaks };
  }
}
