/**
 * A call's span (core/tracing): opened when this node owns the call, ended when its session closes,
 * child of whatever was active then (the command that originated it, which carries the REST
 * request's trace; or the INVITE's handling). The call's activeflow runs inside it, so each flow
 * action is a span of the call's trace. With tracing off every span here is OpenTelemetry's no-op.
 */
import { SpanKind, startSpan, withActive, type Span } from '../../core/tracing';
import { keepCallSpan } from '../kit/call-span';
import type { CallSession } from './session';

const spans = new WeakMap<CallSession, Span>();

/** Opens the call's span (once) and ends it with the hangup. */
export function traceCall(call: CallSession): void {
  if (spans.has(call)) return;
  const row = call.row;
  const span = startSpan('call', {
    kind: row.direction === 'incoming' ? SpanKind.SERVER : SpanKind.CLIENT,
    attributes: { 'openvoice.call.id': call.id, 'openvoice.call.direction': row.direction, 'openvoice.customer.id': row.customer_id },
  });
  spans.set(call, span);
  void call.done.then((ev) => {
    const r = call.row;
    span.setAttributes({ 'openvoice.call.hangup_reason': r.hangup_reason, 'openvoice.call.hangup_by': ev.by, 'openvoice.call.close': ev.reason });
    span.end();
  });
  keepCallSpan(call.id, span, call.done); // by id, for what publishes the call's events (kit/call-span.ts)
}

/** Runs `fn` with the call's span active (its activeflow's spans become children of it). */
export function inCallSpan<T>(call: CallSession, fn: () => T): T {
  const span = spans.get(call);
  return span ? withActive(span, fn) : fn();
}
