/**
 * FreeSWITCH's tone_stream:// scripts (libteletone) as a ToneSpec: `%(on,off,freq[,freq…])` tones
 * separated by `;`, and `loops=N` / `L=N` for passes of the whole script (-1: forever). Pure; the
 * other teletone settings (volume, decay, per-tone `l=`) are refused, not guessed.
 */
import type { ToneSegment, ToneSpec } from './tones';

/** The script after `tone_stream://` as a cadence; throws on what it does not take. */
export function parseTeletone(script: string): ToneSpec {
  const segments: ToneSegment[] = [];
  let repeat: boolean | number = 1;
  for (const raw of script.split(';')) {
    const part = raw.trim();
    if (!part) continue;
    const loops = /^(?:loops|L)=(-?\d+)$/.exec(part);
    if (loops) {
      const n = Number(loops[1]);
      repeat = n < 0 ? true : Math.max(1, n);
      continue;
    }
    const m = /^%\(([^)]*)\)$/.exec(part);
    if (!m) throw new Error(`tone_stream: "${part}" is not a %(on,off,freq…) tone or loops=N`);
    const nums = m[1]!.split(',').map((s) => Number(s.trim()));
    if (nums.length < 2 || nums.some((n) => !Number.isFinite(n) || n < 0)) throw new Error(`tone_stream: "${part}" needs on and off times (ms) and frequencies (Hz)`);
    const [on, off, ...freqs] = nums as [number, number, ...number[]];
    if (freqs.length > 4 || freqs.some((f) => f >= 4000)) throw new Error(`tone_stream: "${part}": at most 4 frequencies, each under 4000 Hz`);
    if (on > 0) segments.push({ freqs, ms: on });
    if (off > 0) segments.push({ freqs: [], ms: off });
  }
  if (segments.length === 0) throw new Error('tone_stream: the script has no tone');
  return { segments, repeat };
}
