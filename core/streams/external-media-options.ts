/**
 * An external media stream's options as the flow actions give them (external_media_start, its twilio
 * encapsulation), checked before anything connects, and the error a refused or failed start is: shared
 * by the actions (media-app/flow) and the service that runs the streams (media-app/streams), which
 * therefore import it from this floor rather than one of them from the other.
 */
import { EXTERNAL_ENCAPSULATIONS, encapsulationProblem } from './encapsulation';

/** A start refused (bad options, egress, a second stream) or a connection that did not come up: the flow is told, not failed. */
export class ExternalMediaError extends Error {}

/** Checks an action's url and encapsulation; returns the problem in words, or null. */
export function externalMediaProblem(url: unknown, encapsulation: unknown): string | null {
  if (typeof url !== 'string' || !url) return 'url is required (a ws:// or wss:// URL)';
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `url ${JSON.stringify(url.slice(0, 80))} is not a URL`;
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:') return `url must be ws:// or wss://, not ${u.protocol}`;
  if (u.username || u.password) return 'url must not carry a user name or password';
  return encapsulationProblem(encapsulation, EXTERNAL_ENCAPSULATIONS);
}

/** Why a status callback URL is refused when the action starts, or null. */
export function statusCallbackProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `status_callback ${JSON.stringify(url.slice(0, 80))} is not a URL`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `status_callback must be http:// or https://, not ${u.protocol}`;
  if (u.username || u.password) return 'status_callback must not carry a user name or password';
  return null;
}
