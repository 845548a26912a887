// What a softphone heard, read from the WAV file it wrote: the share of a tone's frequency and loudness.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { readWav } from '../../media-engine/audio/wav';
import { toneShare as shareOf } from '../../testkit/media-engine/far-end';

/** A 30 s sine tone, 16-bit at `rate` (default 8 kHz), mono or the same in each of `channels` (a softphone's microphone). */
export function toneWav(file: string, hz: number, rate = 8000, channels = 1): void {
  execFileSync('sox', ['-n', '-r', String(rate), '-c', String(channels), '-b', '16', file, 'synth', '30', 'sine', String(hz), 'vol', '0.4']);
}

/**
 * Fraction of the energy at `hz` in the loudest second of a WAV file at its own rate (0 when silent,
 * or when `hz` is above the file's Nyquist frequency: a narrowband file cannot hold a 6 kHz tone).
 */
export function toneShare(file: string, hz: number): number {
  if (!fs.existsSync(file)) return 0;
  const { info, samples: all } = readWav(file);
  const n = info.format.sampleRate;
  const ch = info.format.channels;
  const samples = ch === 1 ? all : all.filter((_, i) => i % ch === 0); // the first channel
  if (hz >= n / 2) return 0;
  let loudest = -1;
  let bestEnergy = 0;
  for (let start = 0; start + n <= samples.length; start += n / 2) {
    let energy = 0;
    for (let i = start; i < start + n; i++) energy += samples[i]! * samples[i]!;
    if (energy > bestEnergy) [loudest, bestEnergy] = [start, energy];
  }
  return loudest < 0 ? 0 : shareOf(samples.subarray(loudest, loudest + n), hz, n);
}

/** Mean absolute sample value of a WAV file (how much sound it holds). */
export function loudness(file: string): number {
  if (!fs.existsSync(file)) return 0;
  const { samples } = readWav(file);
  let sum = 0;
  for (const s of samples) sum += Math.abs(s);
  return samples.length ? sum / samples.length : 0;
}
