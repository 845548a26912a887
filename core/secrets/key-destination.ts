/**
 * A stored secret is sent only to the place it was stored for (docs/security.md "Stored secrets follow
 * no URL"). A client that reads a resource gets its secrets masked (or not at all) and may write them
 * back masked (or leave them out) to keep them; that is fine while the place they are sent to stays.
 * When the place changes (a URL's origin, a SIP host) and the secret is kept that way, the update is
 * refused: whoever moves the place must give the secret again, so a stored vendor key or password
 * cannot be carried to a host of the editor's choosing by someone who never knew it.
 */
import { invalidArgument } from '../errors';

/** Scheme, host and port of a URL, lower case; the text itself trimmed when it is not a URL; '' for none. */
export function urlOrigin(url: string | null | undefined): string {
  const text = (url ?? '').trim();
  if (!text) return '';
  try {
    return new URL(text).origin.toLowerCase();
  } catch {
    return text.toLowerCase();
  }
}

/** Where an AI engine's key goes: its engine_url's origin, else the vendor its engine_model names (core/llm/endpoint.ts). */
export function engineKeyDestination(engineModel: string | null | undefined, engineUrl: string | null | undefined): string {
  const origin = urlOrigin(engineUrl);
  if (origin) return origin;
  const model = engineModel ?? '';
  const dot = model.indexOf('.');
  return `vendor:${dot > 0 ? model.slice(0, dot) : ''}`;
}

export interface KeptSecret {
  /** The secret's field as the API names it (engine_key, registration.password). */
  field: string;
  /** The field that says where it goes (engine_url, registration.registrar). */
  placeField: string;
  /** A secret is stored (non-empty). */
  stored: boolean;
  /** The update keeps it: left out, empty where empty means "unchanged", or sent back masked. */
  kept: boolean;
  /** Where it went before, and where it would go after the update. */
  before: string;
  after: string;
}

/** Throws 400 INVALID_ARGUMENT naming the secret's field when a kept secret would go somewhere new. */
export function refuseMovedSecret(s: KeptSecret): void {
  if (!s.stored || !s.kept || s.before === s.after) return;
  const message = `${s.field} must be given again: ${s.placeField} now points elsewhere, and the stored ${s.field} is only sent to where it was stored for`;
  throw invalidArgument(message, [{ field: s.field, issue: 'must be given again' }]);
}
