/**
 * The vendor keys an AI's versions hold (docs/ai.md "Versions"), kept no longer than they are the
 * AI's: a version's key is withheld (blanked, its path listed in `keys_withheld`) when a later version
 * holds another key for the same place (a rotated key), and every key of every version when the AI is
 * deleted. A version run with a withheld key takes the AI's current key, and only when that key goes
 * where the version's went (same engine_url origin or vendor, same voice or recogniser vendor); else
 * it does not run, saying why. Pure functions over rows; the writes are core/repos/ai-versions.ts's (and migration 0973's).
 */
import { engineKeyDestination } from './key-destination';

/** Where a version's (and an AI's) vendor keys are, as the API names them. */
export const KEY_PATHS = ['engine_key', 'parameter.tts_key', 'parameter.stt_key', 'parameter.tts_fallback.tts_key', 'parameter.llm_fallback.engine_key'] as const;
export type KeyPath = (typeof KEY_PATHS)[number];

/** What a key and its place are read from: an ais row, or a version's config with its keys. */
export interface Keyed {
  engine_model?: string | null;
  engine_url?: string | null;
  tts_type?: string | null;
  stt_type?: string | null;
  engine_key: string | null;
  parameter: Record<string, unknown> | null;
}

type Param = Record<string, unknown>;
const obj = (v: unknown): Param => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Param) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The key stored at `path` ('' for none), sealed as stored. */
export function keyAt(k: Keyed, path: KeyPath): string {
  if (path === 'engine_key') return k.engine_key ?? '';
  const [, a, b] = path.split('.') as [string, string, string | undefined];
  const p = obj(k.parameter);
  return str(b === undefined ? p[a] : obj(p[a])[b]);
}

/** `k`'s engine_key and parameter with `value` at `path` (a path that holds no key is left as it is). */
export function withKeyAt<K extends Keyed>(k: K, path: KeyPath, value: string): K {
  if (path === 'engine_key') return { ...k, engine_key: value };
  const [, a, b] = path.split('.') as [string, string, string | undefined];
  const p = obj(k.parameter);
  if (b === undefined) return typeof p[a] === 'string' ? { ...k, parameter: { ...p, [a]: value } } : k;
  const inner = obj(p[a]);
  return typeof inner[b] === 'string' ? { ...k, parameter: { ...p, [a]: { ...inner, [b]: value } } } : k;
}

/** Where the key at `path` is sent: the engine's URL origin or vendor, the voice's or recogniser's vendor. */
export function keyPlace(k: Keyed, path: KeyPath): string {
  const p = obj(k.parameter);
  switch (path) {
    case 'engine_key':
      return engineKeyDestination(k.engine_model, k.engine_url);
    case 'parameter.llm_fallback.engine_key': {
      const f = obj(p.llm_fallback);
      return engineKeyDestination(str(f.engine_model), str(f.engine_url));
    }
    case 'parameter.tts_key':
      return `tts:${k.tts_type ?? ''}`;
    case 'parameter.stt_key':
      return `stt:${k.stt_type ?? ''}`;
    case 'parameter.tts_fallback.tts_key':
      return `tts:${str(obj(p.tts_fallback).tts_type)}`;
  }
}

/** `k` with the keys at `paths` blanked, and the paths that held one. */
export function withheld<K extends Keyed>(k: K, paths: readonly KeyPath[]): { row: K; paths: KeyPath[] } {
  const held = paths.filter((p) => keyAt(k, p) !== '');
  return { row: held.reduce((r, p) => withKeyAt(r, p, ''), k), paths: held };
}

/**
 * The key paths `after` holds a new key at (non-empty and not `before`'s, compared by `same`): each
 * supersedes every earlier version's key for the same place.
 */
export function newKeys(before: Keyed | null, after: Keyed, same: (a: string, b: string) => boolean): KeyPath[] {
  return KEY_PATHS.filter((p) => keyAt(after, p) !== '' && !(before && same(keyAt(before, p), keyAt(after, p))));
}

/**
 * The version `v` (an AI as the version had it) with each withheld key taken from the AI now, or why
 * it cannot run: the AI has no key there now, or its key goes elsewhere than the version's went.
 */
export function restoreWithheld<K extends Keyed>(v: K, paths: readonly KeyPath[], ai: Keyed): K | { error: string } {
  let out = v;
  for (const p of paths) {
    const now = keyAt(ai, p);
    if (!now || keyPlace(ai, p) !== keyPlace(v, p)) {
      const why = now ? `the AI's ${p} now goes to ${keyPlace(ai, p)}, not ${keyPlace(v, p)}` : `the AI has no ${p} now`;
      return { error: `its ${p} was withdrawn (replaced by a later key, or the AI deleted) and ${why}` };
    }
    out = withKeyAt(out, p, now);
  }
  return out;
}
