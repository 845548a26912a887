/** Extension values, SIP passwords and direct hashes: what is accepted and how new ones are made. */
import { randomBytes, randomInt } from 'node:crypto';

/**
 * The extension (also the SIP username): a SIP user part without escapes. `direct.` is reserved for
 * direct URIs; an E.164-looking value is refused so that a user part never reads as a phone number.
 */
export function extensionProblem(value: string): string | null {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(value)) {
    return 'extension is 1-64 characters of letters, digits, ".", "_" or "-", starting with a letter or digit';
  }
  if (value.toLowerCase().startsWith('direct.')) return 'extension may not start with "direct."';
  return null;
}

/** Printable ASCII without spaces (phones store it in line-based and XML files), 8 to 128 characters. */
export function passwordProblem(value: string): string | null {
  if (value.length < 8 || value.length > 128) return 'password is 8 to 128 characters';
  if (!/^[\x21-\x7e]+$/.test(value)) return 'password is printable ASCII without spaces';
  return null;
}

const PW_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** 20 characters from an unambiguous alphabet (~117 bits). */
export function generatePassword(length = 20): string {
  let s = '';
  for (let i = 0; i < length; i++) s += PW_ALPHABET[randomInt(PW_ALPHABET.length)];
  return s;
}

/** 12 lowercase hex characters; the direct URI is `sip:direct.<hash>@{sip_domain}`. */
export function generateDirectHash(): string {
  return randomBytes(6).toString('hex');
}
