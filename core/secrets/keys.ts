/**
 * Vendor keys at rest (docs/ai.md "Keys"): an AI's engine_key and the keys in its `parameter`
 * (tts_key, tts_fallback.tts_key, llm_fallback.engine_key, stt_key) are stored as
 * `enc:v1:<iv>:<tag>:<ciphertext>` (base64url): AES-256-GCM under a key derived with HKDF-SHA256
 * from the platform secret (config.jwtSecret). Repos seal on write; the key is opened only where it
 * is used (the LLM endpoint, the voice and speech-to-speech adapters) and never logged.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export const ENVELOPE_V1 = 'enc:v1:';
const INFO = 'openvoice ai vendor keys v1';

/** A stored key that cannot be opened: tampered with, or sealed under another platform secret. */
export class SealedKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealedKeyError';
  }
}

export const isSealed = (v: string): boolean => v.startsWith(ENVELOPE_V1);

export function deriveKey(platformSecret: string): Buffer {
  if (!platformSecret) throw new SealedKeyError('no platform secret to derive the key encryption key from');
  return Buffer.from(hkdfSync('sha256', platformSecret, Buffer.alloc(0), INFO, 32));
}

let processKey: Buffer | null = null;

/** Set once at start (control-api and media-app) from config.jwtSecret. */
export function useKeySecret(platformSecret: string): void {
  processKey = deriveKey(platformSecret);
}

function current(key?: Buffer): Buffer {
  const k = key ?? processKey;
  if (!k) throw new SealedKeyError('the key encryption key is not set (useKeySecret at start)');
  return k;
}

/** The envelope of `plain`; an empty key stays empty, a sealed one stays as it is. */
export function sealKey(plain: string, key?: Buffer): string {
  if (!plain || isSealed(plain)) return plain;
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', current(key), iv);
  const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return `${ENVELOPE_V1}${iv.toString('base64url')}:${c.getAuthTag().toString('base64url')}:${body.toString('base64url')}`;
}

/**
 * The key in `stored`. A value without the envelope is one written before migration 0958 (or not
 * from a row at all, e.g. a platform setting) and is returned as it is.
 */
export function openKey(stored: string, key?: Buffer): string {
  if (!isSealed(stored)) return stored;
  const parts = stored.slice(ENVELOPE_V1.length).split(':');
  if (parts.length !== 3) throw new SealedKeyError('a stored vendor key is not a valid enc:v1 envelope');
  const [iv, tag, body] = parts.map((p) => Buffer.from(p, 'base64url'));
  if (iv.length !== 12 || tag.length !== 16) throw new SealedKeyError('a stored vendor key is not a valid enc:v1 envelope');
  try {
    const d = createDecipheriv('aes-256-gcm', current(key), iv);
    d.setAuthTag(tag);
    return Buffer.concat([d.update(body), d.final()]).toString('utf8');
  } catch {
    throw new SealedKeyError('a stored vendor key cannot be decrypted: it was altered, or sealed under another platform secret (JWT_SECRET); set the key again');
  }
}

type Param = Record<string, unknown>;
const obj = (v: unknown): v is Param => !!v && typeof v === 'object' && !Array.isArray(v);

/** `parameter` with each vendor key in it passed through `f` with its path (tts_key, stt_key, tts_fallback.tts_key, llm_fallback.engine_key). */
export function mapParameterKeys(p: Param | null | undefined, f: (v: string, path: string) => string): Param {
  if (!obj(p)) return p ?? {};
  const out: Param = { ...p };
  for (const k of ['tts_key', 'stt_key'] as const) if (typeof out[k] === 'string') out[k] = f(out[k], `parameter.${k}`);
  const nested: [string, string][] = [
    ['tts_fallback', 'tts_key'],
    ['llm_fallback', 'engine_key'],
  ];
  for (const [o, k] of nested) {
    const v = out[o];
    if (obj(v) && typeof v[k] === 'string') out[o] = { ...v, [k]: f(v[k], `parameter.${o}.${k}`) };
  }
  return out;
}

export const sealParameter = (p: Param | null | undefined, key?: Buffer): Param => mapParameterKeys(p, (v) => sealKey(v, key));
export const openParameter = (p: Param | null | undefined, key?: Buffer): Param => mapParameterKeys(p, (v) => openKey(v, key));

/** For showing only: the key opened, or a marker when it cannot be (the API masks it anyway). */
export function openForShow(stored: string): string {
  try {
    return openKey(stored);
  } catch {
    return '(undecryptable)';
  }
}
