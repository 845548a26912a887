/**
 * 16-bit little-endian PCM (the wire's and the files' L16) and Int16Array samples, both ways. On a
 * little-endian host (every one the platform runs on) the bytes are the samples as they are: a byte copy
 * or a view; elsewhere each sample is read or written little-endian. A pure leaf (core/audio/).
 */

/** The host stores an Int16Array's samples little-endian: its bytes are L16 as they are. */
export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** L16 bytes → new samples (an odd trailing byte ignored); safe at an odd offset of a pooled ArrayBuffer. */
export function pcm16ToSamples(pcm: Buffer): Int16Array {
  const out = new Int16Array(pcm.length >> 1);
  if (LITTLE_ENDIAN) {
    // a byte copy: the Buffer may sit at an odd offset of a pooled ArrayBuffer
    Buffer.from(out.buffer).set(pcm.subarray(0, out.length * 2));
    return out;
  }
  for (let i = 0; i < out.length; i++) out[i] = pcm.readInt16LE(i * 2);
  return out;
}

/**
 * Samples → L16 bytes. On a little-endian host a view of `samples`, nothing copied: the caller hands over
 * samples of its own (that no one writes to afterwards); copy them first if they may be reused.
 */
export function samplesToPcm16(samples: Int16Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const b = Buffer.allocUnsafe(samples.length * 2);
  for (let i = 0; i < samples.length; i++) b.writeInt16LE(samples[i]!, i * 2);
  return b;
}
