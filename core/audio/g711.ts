/**
 * G.711 µ-law (PCMU) and A-law (PCMA), table-based (ITU-T G.711).
 * Decoding is a 256-entry lookup; encoding a 64 Ki-entry lookup indexed by the 16-bit sample,
 * so a 160-sample frame costs 160 array reads either way.
 */

function muLawEncodeSample(pcm: number): number {
  const BIAS = 0x84;
  const CLIP = 32635;
  const sign = (pcm >> 8) & 0x80;
  if (sign) pcm = -pcm;
  if (pcm > CLIP) pcm = CLIP;
  pcm += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (pcm & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (pcm >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

function muLawDecodeSample(u: number): number {
  u = ~u & 0xff;
  const sign = u & 0x80;
  const exponent = (u >> 4) & 0x07;
  const mantissa = u & 0x0f;
  const sample = (((mantissa << 3) + 0x84) << exponent) - 0x84;
  return sign ? -sample : sample;
}

function aLawEncodeSample(pcm: number): number {
  let mask: number;
  if (pcm >= 0) mask = 0xd5;
  else {
    mask = 0x55;
    pcm = -pcm - 1;
  }
  // segment end points for 13-bit magnitude (pcm >> 3)
  const seg = [0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff, 0x1fff, 0x3fff, 0x7fff];
  let s = 0;
  while (s < 8 && pcm > seg[s]) s++;
  if (s >= 8) return (0x7f ^ mask) & 0xff;
  let aval = s << 4;
  if (s < 2) aval |= (pcm >> 4) & 0x0f;
  else aval |= (pcm >> (s + 3)) & 0x0f;
  return (aval ^ mask) & 0xff;
}

function aLawDecodeSample(a: number): number {
  a ^= 0x55;
  let t = (a & 0x0f) << 4;
  const seg = (a & 0x70) >> 4;
  if (seg === 0) t += 8;
  else if (seg === 1) t += 0x108;
  else t = (t + 0x108) << (seg - 1);
  return a & 0x80 ? t : -t;
}

const MU_DECODE = new Int16Array(256);
const A_DECODE = new Int16Array(256);
const MU_ENCODE = new Uint8Array(65536);
const A_ENCODE = new Uint8Array(65536);
for (let i = 0; i < 256; i++) {
  MU_DECODE[i] = muLawDecodeSample(i);
  A_DECODE[i] = aLawDecodeSample(i);
}
for (let i = 0; i < 65536; i++) {
  const s = i >= 32768 ? i - 65536 : i;
  MU_ENCODE[i] = muLawEncodeSample(s);
  A_ENCODE[i] = aLawEncodeSample(s);
}

export type G711Law = 'PCMU' | 'PCMA';

/** Encodes `pcm` into `out` (allocated when omitted); returns the bytes written. */
export function encodeG711(law: G711Law, pcm: Int16Array, out?: Uint8Array): Uint8Array {
  const table = law === 'PCMU' ? MU_ENCODE : A_ENCODE;
  const dst = out ?? new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) dst[i] = table[pcm[i] & 0xffff];
  return dst;
}

/** Decodes G.711 bytes into 16-bit linear samples. */
export function decodeG711(law: G711Law, bytes: Uint8Array, out?: Int16Array): Int16Array {
  const table = law === 'PCMU' ? MU_DECODE : A_DECODE;
  const dst = out ?? new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) dst[i] = table[bytes[i]];
  return dst;
}

/** Encodes pcm[from..to) into out[0..to-from) without allocating; returns the byte count. */
export function encodeG711Range(law: G711Law, pcm: Int16Array, from: number, to: number, out: Uint8Array): number {
  const table = law === 'PCMU' ? MU_ENCODE : A_ENCODE;
  for (let i = from; i < to; i++) out[i - from] = table[pcm[i] & 0xffff];
  return to - from;
}

/** Decodes bytes[from..to) into out[0..to-from) without allocating; returns the sample count. */
export function decodeG711Range(law: G711Law, bytes: Uint8Array, from: number, to: number, out: Int16Array): number {
  const table = law === 'PCMU' ? MU_DECODE : A_DECODE;
  for (let i = from; i < to; i++) out[i - from] = table[bytes[i]];
  return to - from;
}

export const muLaw = {
  encodeSample: (s: number) => MU_ENCODE[s & 0xffff],
  decodeSample: (b: number) => MU_DECODE[b & 0xff],
};
export const aLaw = {
  encodeSample: (s: number) => A_ENCODE[s & 0xffff],
  decodeSample: (b: number) => A_DECODE[b & 0xff],
};

/** Static payload types of RFC 3551. */
export const PT_PCMU = 0;
export const PT_PCMA = 8;

/** The tables themselves, for the C legs (native/rtp_legs.c encodes and decodes with these, so both paths agree to the bit). */
export const G711_TABLES = { muDecode: MU_DECODE, aDecode: A_DECODE, muEncode: MU_ENCODE, aEncode: A_ENCODE };
