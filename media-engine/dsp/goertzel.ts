/**
 * Goertzel single-bin DFT, used by the DTMF and beep detectors. Coefficients are precomputed per
 * target frequency so the hot loop is one multiply-add per sample.
 */
import { SAMPLE_RATE } from './frame';

/** 2·cos(2πf/fs): the Goertzel recurrence coefficient for frequency `hz`. */
export function goertzelCoeff(hz: number, sampleRate = SAMPLE_RATE): number {
  return 2 * Math.cos((2 * Math.PI * hz) / sampleRate);
}

/**
 * Squared magnitude |X(f)|² of samples[start, start+n) at the frequency whose coefficient is `coeff`.
 * For a sinusoid of amplitude A filling the window this is about (A·n/2)².
 */
export function goertzelPower(samples: ArrayLike<number>, start: number, n: number, coeff: number): number {
  let s1 = 0;
  let s2 = 0;
  const end = start + n;
  for (let i = start; i < end; i++) {
    const s0 = samples[i] + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return s1 * s1 + s2 * s2 - coeff * s1 * s2;
}

/**
 * Fraction (0..1) of the window's energy that sits at the probed frequency: 2·|X|²/(n·Σx²).
 * A pure tone at exactly that frequency gives ≈1; two equal tones give ≈0.5 each.
 */
export function relativePower(power: number, n: number, windowEnergy: number): number {
  return windowEnergy > 0 ? (2 * power) / (n * windowEnergy) : 0;
}
