// The speech-to-speech stand-ins' stand-in for a vendor VAD: 20 ms frames, speech after 60 ms above
// an energy threshold, the end of it after `silenceMs` below it.
export class EnergyVad {
  private voicedRun = 0;
  private quietRun = 0;
  speaking = false;

  constructor(public silenceMs = 500) {}

  /** One 20 ms frame: 'start' / 'stop' when the caller starts / stops speaking, else null. */
  frame(pcm: Int16Array): 'start' | 'stop' | null {
    let sum = 0;
    for (const v of pcm) sum += v * v;
    if (Math.sqrt(sum / pcm.length) > 600) {
      this.voicedRun += 20;
      this.quietRun = 0;
    } else {
      this.quietRun += 20;
      this.voicedRun = 0;
    }
    if (!this.speaking && this.voicedRun >= 60) {
      this.speaking = true;
      return 'start';
    }
    if (this.speaking && this.quietRun >= this.silenceMs) {
      this.speaking = false;
      return 'stop';
    }
    return null;
  }
}

/** A tone of `ms` at `rate` as 16-bit little-endian PCM, continuing from sample `from`. */
export function pcmTone(ms: number, hz: number, rate: number, from: number): Buffer {
  const n = Math.round((ms * rate) / 1000);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) out.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * hz * (from + i)) / rate)), i * 2);
  return out;
}
