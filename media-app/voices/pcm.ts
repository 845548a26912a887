/**
 * Turning a vendor's audio bytes into PCM for the engine as they arrive: µ-law 8 kHz decodes byte by
 * byte; 16-bit little-endian PCM at another rate goes through media-engine's resampler (libspeexdsp),
 * one per stream, with an odd byte carried to the next chunk, to 8 kHz, or to 16 kHz for a wideband
 * leg (resampled once from the vendor's rate, never through 8 kHz).
 */
import { decodeG711, muLaw, Resampler } from '../../media-engine';

export function ulawToPcm(bytes: Uint8Array): Int16Array {
  return decodeG711('PCMU', bytes);
}

export function pcmToUlaw(pcm: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = muLaw.encodeSample(pcm[i]!);
  return out;
}

/** A vendor's 16-bit little-endian PCM at `inRate` → Int16Array chunks at `outRate` (8000 or 16000). */
export class PcmToRate {
  private carry: number | null = null;
  private readonly rs: Resampler | null;

  constructor(
    readonly inRate: number,
    readonly outRate: 8000 | 16000 = 8000,
  ) {
    this.rs = inRate === outRate ? null : new Resampler(inRate, outRate);
  }

  /** Samples already 16-bit at `inRate` (a whole file) converted to `outRate`. */
  pcm(samples: Int16Array): Int16Array {
    if (!this.rs) return samples;
    const out = new Int16Array(this.rs.outputLength(samples.length) + 16);
    return out.subarray(0, this.rs.process(samples, out));
  }

  push(chunk: Uint8Array): Int16Array {
    let bytes = chunk;
    if (this.carry !== null) {
      const joined = new Uint8Array(chunk.length + 1);
      joined[0] = this.carry;
      joined.set(chunk, 1);
      bytes = joined;
      this.carry = null;
    }
    if (bytes.length % 2) {
      this.carry = bytes[bytes.length - 1]!;
      bytes = bytes.subarray(0, bytes.length - 1);
    }
    const n = bytes.length / 2;
    const pcm = new Int16Array(n);
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < n; i++) pcm[i] = dv.getInt16(i * 2, true);
    return this.pcm(pcm);
  }

  close(): void {
    this.rs?.close();
  }
}
