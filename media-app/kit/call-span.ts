/**
 * The spans of the calls this node owns, by call id (core/tracing): call/trace.ts opens a call's span and
 * keeps it here; what publishes a call's event (events.ts) runs under it by the call's id alone, without
 * knowing the call's session. A span lingers a while after its call's close (a hangup published late).
 */
import { withActive, type Span } from '../../core/tracing';

const byId = new Map<string, Span>();
/** How long a call's span still parents its events after the close (a hangup published late). */
const LINGER_MS = 10_000;

/** Keeps a recording call's span under its id, until `LINGER_MS` after `ended` settles. */
export function keepCallSpan(callId: string, span: Span, ended: Promise<unknown>): void {
  if (!span.isRecording()) return;
  byId.set(callId, span);
  void ended.then(() => {
    setTimeout(() => byId.get(callId) === span && byId.delete(callId), LINGER_MS).unref();
  });
}

/**
 * Runs `fn` (an event of the call being published) with the call's span active when this node
 * owns the call, so the event carries the call's trace to its webhook deliveries (core/events/bus.ts).
 */
export function inCallIdSpan<T>(callId: string, fn: () => T): T {
  const span = byId.get(callId);
  return span ? withActive(span, fn) : fn();
}
