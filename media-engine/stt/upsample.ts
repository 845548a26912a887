/**
 * 8 kHz → 16 kHz by linear interpolation, streaming (keeps the last sample across frames).
 * Plenty for a recogniser whose telephone-band input has nothing above 4 kHz anyway.
 */
export class Upsampler2x {
  private prev = 0;

  /** Writes 2·input.length samples into `out` (little-endian 16-bit when out is a Buffer view). */
  process(input: Int16Array, out: Int16Array): void {
    let p = this.prev;
    for (let i = 0; i < input.length; i++) {
      const x = input[i];
      out[2 * i] = (p + x) >> 1;
      out[2 * i + 1] = x;
      p = x;
    }
    this.prev = p;
  }
}
