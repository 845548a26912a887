/**
 * What a fork's server sends back to be played (jambonz's mod_audio_fork, bidirectional audio): the
 * audio of a `playAudio` message (`audioContentType` raw at `sampleRate`, or a WAV of 16-bit mono PCM,
 * base64 in `audioContent`), and the raw binary frames of a fork started with bidirectional streaming,
 * at its stream rate. Brought to a rate the engine injects (8 or 16 kHz: other multiples of 8000 are
 * resampled to 16 kHz) as pure data; the session injects it into what the channel sends.
 */
import { parseWavHeader, Resampler, type InjectRate } from '../../media-engine';

/** The audio of a playAudio message, or why it is not audio the module plays. */
export type PlayAudio = { samples: Int16Array; rate: number } | { refused: string };

/** The rates a clip may have (the module's: multiples of 8000 up to 64000). */
const RATES = [8000, 16000, 24000, 32000, 48000, 64000];

/** Little-endian 16-bit samples of `buf` (an odd last byte dropped). */
export function pcm16(buf: Buffer): Int16Array {
  const out = new Int16Array(buf.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = buf.readInt16LE(i * 2);
  return out;
}

/** `data` of a playAudio message as processIncomingMessage reads it (a raw sampleRate of 0 or none: 16000, its `.r16`). */
export function decodePlayAudio(data: Record<string, unknown>): PlayAudio {
  const content = data.audioContent;
  if (typeof content !== 'string') return { refused: 'no audioContent' };
  // Buffer.from skips what is not base64: such content is refused, not played as noise
  if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(content)) return { refused: 'audioContent is not base64' };
  const type = data.audioContentType;
  const bytes = Buffer.from(content, 'base64');
  if (type === 'raw') {
    const sr = typeof data.sampleRate === 'number' ? Math.trunc(data.sampleRate) : 0;
    const rate = RATES.includes(sr) ? sr : 16000;
    return { samples: pcm16(bytes), rate };
  }
  if (type === 'wav' || type === 'wave') {
    try {
      const info = parseWavHeader(bytes);
      const f = info.format;
      if (f.encoding !== 'pcm' || f.bitsPerSample !== 16 || f.channels !== 1) return { refused: 'a WAV that is not 16-bit mono PCM' };
      // the resampler takes 1000..192000 and a WAV header holds 2^32 - 1: only the rates a clip may have
      if (!RATES.includes(f.sampleRate)) return { refused: `a WAV at ${f.sampleRate} Hz (not a multiple of 8000 up to 64000)` };
      return { samples: pcm16(bytes.subarray(info.dataOffset, info.dataOffset + info.dataBytes)), rate: f.sampleRate };
    } catch (e) {
      return { refused: (e as Error).message };
    }
  }
  return { refused: `unsupported audioContentType: ${String(type)}` };
}

/** The rate audio at `rate` is injected at: as it is at 8 or 16 kHz, else resampled to 16 kHz. */
export const injectRateFor = (rate: number): InjectRate => (rate === 8000 ? 8000 : 16000);

/** One clip (a playAudio message's audio) at its inject rate; `rate` a multiple of 8000 up to 64000. */
export function toInjectRate(samples: Int16Array, rate: number): Int16Array {
  const to = injectRateFor(rate);
  if (to === rate || samples.length === 0) return samples;
  const r = new Resampler(rate, to);
  try {
    const out = new Int16Array(r.outputLength(samples.length));
    return out.subarray(0, r.process(samples, out));
  } finally {
    r.close();
  }
}

/** The binary stream's frames at their inject rate: one resampler for the stream's life when its rate needs one. */
export class StreamIn {
  private resampler: Resampler | null;
  /** an odd byte left over from the last frame */
  private carry: Buffer | null = null;

  constructor(readonly rate: number) {
    this.resampler = injectRateFor(rate) === rate ? null : new Resampler(rate, injectRateFor(rate));
  }

  convert(frame: Buffer): Int16Array {
    let buf = this.carry ? Buffer.concat([this.carry, frame]) : frame;
    this.carry = buf.length % 2 ? Buffer.from(buf.subarray(buf.length - 1)) : null;
    if (this.carry) buf = buf.subarray(0, buf.length - 1);
    const pcm = pcm16(buf);
    if (!this.resampler || pcm.length === 0) return pcm;
    const out = new Int16Array(this.resampler.outputLength(pcm.length) + 8);
    return out.subarray(0, this.resampler.process(pcm, out));
  }

  close(): void {
    this.resampler?.close();
    this.resampler = null;
  }
}
