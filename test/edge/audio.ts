// What a softphone heard, read from the WAV file it wrote: the share of a tone's frequency and loudness.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { readWav } from '../../media-engine/audio/wav';
import { goertzelCoeff, goertzelPower, relativePower } from '../../media-engine/dsp/goertzel';

/** A 30 s sine tone, 8 kHz mono 16-bit (a softphone's microphone). */
export function toneWav(file: string, hz: number): void {
  execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', file, 'synth', '30', 'sine', String(hz), 'vol', '0.4']);
}

/** Fraction of the energy at `hz` in the loudest second of a WAV file (0 when silent). */
export function toneShare(file: string, hz: number): number {
  if (!fs.existsSync(file)) return 0;
  const { samples } = readWav(file);
  const n = 8000;
  const coeff = goertzelCoeff(hz);
  let best = 0;
  let bestEnergy = 0;
  for (let start = 0; start + n <= samples.length; start += n / 2) {
    let energy = 0;
    for (let i = start; i < start + n; i++) energy += samples[i]! * samples[i]!;
    if (energy > bestEnergy) {
      bestEnergy = energy;
      best = relativePower(goertzelPower(samples, start, n, coeff), n, energy / n);
    }
  }
  return best;
}

/** Mean absolute sample value of a WAV file (how much sound it holds). */
export function loudness(file: string): number {
  if (!fs.existsSync(file)) return 0;
  const { samples } = readWav(file);
  let sum = 0;
  for (const s of samples) sum += Math.abs(s);
  return samples.length ? sum / samples.length : 0;
}

