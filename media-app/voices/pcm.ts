/**
 * Turning a vendor's audio bytes into 8 kHz PCM as they arrive: µ-law 8 kHz decodes byte by byte;
 * 16-bit little-endian PCM at another rate goes through media-engine's resampler (libspeexdsp),
 * one per stream, with an odd byte carried to the next chunk.
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

export class PcmTo8k {
  private carry: number | null = null;
  private readonly rs: Resampler | null;

  constructor(readonly inRate: number) {
    this.rs = inRate === 8000 ? null : new Resampler(inRate, 8000);
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
    if (!this.rs) return pcm;
    const out = new Int16Array(this.rs.outputLength(n) + 16);
    const w = this.rs.process(pcm, out);
    return out.subarray(0, w);
  }

  close(): void {
    this.rs?.close();
  }
}
