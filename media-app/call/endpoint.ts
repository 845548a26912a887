/**
 * The one place a call's media endpoint is made (docs/architecture.md "The call core"). Every path
 * that gives a call its endpoint comes here: an inbound INVITE's answer to the offer (before the call
 * exists), an outgoing leg (originate, the call action, a connect leg near its master), both legs of an
 * internal call. Its failure is handled once: a call whose endpoint the media engine cannot give
 * fails (cause `failure`, the reason logged) before anything is dialled; an inbound INVITE is refused
 * (488, call/media-refusal.ts) before any call exists. No path retries or goes on without media.
 */
import type { CallEndpoint } from '../media-server/endpoint';
import type { CallEndpointOptions } from '../media-server/port';
import type { CallDeps } from './deps';
import type { CallSession } from './session';

/** A new endpoint, or the media engine's reason for not giving one (never throws). */
export async function createCallEndpoint(deps: Pick<CallDeps, 'media'>, opts: CallEndpointOptions = {}): Promise<{ endpoint: CallEndpoint } | { error: string }> {
  try {
    return { endpoint: await deps.media.createEndpoint(opts) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/**
 * An endpoint made for `call` (its own, or, `own: false`, one the call needs for its other side: the
 * callee of an internal call), or null: then the reason is logged and the call has failed (closed with
 * cause `failure`). `ready`: work that must be done before the call may close (its owner written):
 * the endpoint is made meanwhile. A call that has its endpoint keeps it.
 */
export async function allocateEndpoint(deps: CallDeps, call: CallSession, opts: CallEndpointOptions = {}, o: { own?: boolean; ready?: Promise<unknown> } = {}): Promise<CallEndpoint | null> {
  const own = o.own ?? true;
  if (own && call.endpoint) {
    await o.ready;
    return call.endpoint;
  }
  const making = createCallEndpoint(deps, opts);
  try {
    await o.ready;
  } catch (err) {
    const made = await making;
    if ('endpoint' in made) await made.endpoint.destroy().catch(() => undefined);
    throw err;
  }
  const made = await making;
  if ('error' in made) {
    deps.logger.error({ err: made.error, call: call.id }, 'no media endpoint for the call: it fails');
    await call.finish('failure');
    return null;
  }
  if (!own) return made.endpoint;
  if (call.isEnded) {
    // closed while the endpoint was made: it goes back at once
    await made.endpoint.destroy().catch(() => undefined);
    return null;
  }
  call.endpoint = made.endpoint;
  return made.endpoint;
}
