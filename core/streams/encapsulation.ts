/**
 * Media stream audio (spec: Limits, "Media stream chunk"): 8 kHz 16-bit signed little-endian mono in
 * 20 ms chunks of 160 samples (320 bytes), carried in one of three encapsulations.
 */
import { jsonText } from '../json-text';

export const ENCAPSULATIONS = ['rtp', 'sln', 'audiosocket'] as const;
export type Encapsulation = (typeof ENCAPSULATIONS)[number];

export const SAMPLE_RATE = 8000;
export const FRAME_SAMPLES = 160;
export const FRAME_BYTES = FRAME_SAMPLES * 2;
export const FRAME_MS = 20;

export function isEncapsulation(v: unknown): v is Encapsulation {
  return typeof v === 'string' && (ENCAPSULATIONS as readonly string[]).includes(v);
}

/** Why an encapsulation value is refused, or null when it is good (same words on both sides). */
export function encapsulationProblem(v: unknown, allowed: readonly string[] = ENCAPSULATIONS): string | null {
  if (v === undefined || v === null || v === '') return `encapsulation is required: one of ${allowed.join(', ')}`;
  if (typeof v !== 'string' || !allowed.includes(v)) return `unknown encapsulation ${JSON.stringify(jsonText(v).slice(0, 40))}: use one of ${allowed.join(', ')}`;
  return null;
}

/** What external_media_start takes: the PCM encapsulations and Twilio Media Streams (JSON, µ-law). */
export const EXTERNAL_ENCAPSULATIONS = [...ENCAPSULATIONS, 'twilio'] as const;
export type ExternalEncapsulation = (typeof EXTERNAL_ENCAPSULATIONS)[number];
