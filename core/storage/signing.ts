/**
 * Signed, expiring download URLs. The key is STORAGE_SIGNING_KEY, or one generated once under
 * DATA_DIR (like the JWT secret) so the default install works; STORAGE_SIGNING_KEY=none turns
 * signing off, and downloads then answer 503 SIGNING_NOT_CONFIGURED.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export function signingKey(dataDir: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const v = env.STORAGE_SIGNING_KEY?.trim();
  if (v === 'none') return null;
  if (v) {
    if (v.length < 32) throw new Error('STORAGE_SIGNING_KEY: must be at least 32 characters (or "none")');
    return v;
  }
  const file = path.join(dataDir, 'storage-signing-key');
  try {
    const s = fs.readFileSync(file, 'utf8').trim();
    if (s.length >= 32) return s;
  } catch {
    /* first start */
  }
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    const s = randomBytes(32).toString('base64url');
    fs.writeFileSync(file, s + '\n', { mode: 0o600 });
    return s;
  } catch {
    return null;
  }
}

function mac(key: string, resource: string, expires: number): string {
  return createHmac('sha256', key).update(`${resource}\n${expires}`).digest('base64url');
}

/** Query string `expires=<unix s>&signature=<mac>` for `resource` (e.g. "recording/<id>/<filename>"). */
export function signResource(key: string, resource: string, expiresSec: number): string {
  return `expires=${expiresSec}&signature=${mac(key, resource, expiresSec)}`;
}

export function checkSignature(key: string, resource: string, expires: unknown, signature: unknown, nowSec: number): 'ok' | 'expired' | 'invalid' {
  if (typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) || typeof signature !== 'string') return 'invalid';
  const want = Buffer.from(mac(key, resource, Number(expires)));
  const got = Buffer.from(signature);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return 'invalid';
  return Number(expires) < nowSec ? 'expired' : 'ok';
}
