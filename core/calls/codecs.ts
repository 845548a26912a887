/**
 * The `codecs` of trunks, providers and extensions: the audio codecs that party's calls may use, in
 * the order our own offers (outbound INVITEs) list them. Answering an offer, the caller's order wins
 * and this list only filters (RFC 3264 §6.1). Names are matched without regard to case and written as
 * the engine names them (PCMU, PCMA, G722, opus).
 *
 * Defaults: wideband first for extensions (desk phones and softphones all do G.722 or Opus), G.711
 * first for trunks and providers (carriers and PBXs expect it; wideband is still taken when offered).
 */
import { CODEC_NAMES, type CodecName as AudioCodecName } from '../audio/codec-names';

export type { AudioCodecName };
export const KNOWN_CODECS: readonly AudioCodecName[] = CODEC_NAMES;
export const DEFAULT_EXTENSION_CODECS: readonly AudioCodecName[] = ['G722', 'opus', 'PCMU', 'PCMA'];
export const DEFAULT_TRUNK_CODECS: readonly AudioCodecName[] = ['PCMU', 'PCMA', 'G722', 'opus'];

const BY_LOWER = new Map<string, AudioCodecName>(KNOWN_CODECS.map((c) => [c.toLowerCase(), c]));

/** A codec name as the engine writes it, or null when it is none we know. */
export function codecName(name: string): AudioCodecName | null {
  return BY_LOWER.get(name.trim().toLowerCase()) ?? null;
}

/**
 * An ordered list from names (an array, or the comma-separated string providers used to take):
 * normalised, duplicates after the first dropped. Unknown names are returned in `unknown`.
 */
export function parseCodecList(input: readonly string[] | string): { codecs: AudioCodecName[]; unknown: string[] } {
  const names =
    typeof input === 'string'
      ? input
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : input;
  const codecs: AudioCodecName[] = [];
  const unknown: string[] = [];
  for (const n of names) {
    const c = codecName(n);
    if (!c) unknown.push(n);
    else if (!codecs.includes(c)) codecs.push(c);
  }
  return { codecs, unknown };
}

/** A stored list as the engine takes it (rows written before the column had a value get the default). */
export function codecsOf(stored: readonly string[] | null | undefined, fallback: readonly AudioCodecName[]): AudioCodecName[] {
  const { codecs } = parseCodecList(stored ?? []);
  return codecs.length ? codecs : [...fallback];
}
