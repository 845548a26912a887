/**
 * sip-server's transactions as spans (docs/observability.md "Traces"):
 * - `sip INVITE` (kind server) for an INVITE from the network that starts a dialog: the root of the
 *   call's trace. Its context reaches media-app in the request itself: sip-server removes any
 *   `X-Openvoice-Traceparent` the network sent and adds its own, so the call's spans there become
 *   children of this one.
 * - `sip INVITE` (kind client) for an application's INVITE: a child of the context the application
 *   put in `X-Openvoice-Traceparent` (its call's span), a header removed before the wire.
 * - `sip <METHOD>` (server or client) for each request inside a traced dialog, both ways: children
 *   of the span that formed the dialog, which the dialog remembers (`Dialog.trace`). The network's
 *   trace headers on them are never read.
 * - `sip REGISTER` (server, or client for an application's) as a root span of its own: each
 *   transaction of a registration (the 401 challenge, then the 200) is one, with the Call-ID that
 *   ties them together. No header of the request is recorded (never Authorization).
 * Each span ends with the final status (`sip.response.status_code`) or why there was none
 * (`openvoice.sip.outcome`). With tracing off every span is a no-op and no header is added.
 */
import { contextOf, extractContext, failSpan, injectContext, isSpanContextValid, ROOT_CONTEXT, SpanKind, startSpan, type Context, type Span } from '../../core/tracing';
import { SIP_TRACE_HEADER as TRACE_HEADER } from '../../core/sip/trace-header';
import type { Headers, SipRequest } from '../message';

/** New requests from outside a dialog that get a root span (OPTIONS, MESSAGE, SUBSCRIBE … do not). */
const TRACED_NEW = new Set(['INVITE', 'REGISTER']);

/** Removes a trace header the network (or an application's template) carried: ours alone is believed. */
export function dropTraceHeader(headers: Headers): string | undefined {
  const value = headers.get(TRACE_HEADER);
  if (value !== undefined) headers.delete(TRACE_HEADER);
  return value;
}

const attributes = (method: string, callId: string, transport: string) => ({ 'sip.method': method, 'sip.call_id': callId, 'network.transport': transport.toLowerCase() });

/**
 * A new request from the network: INVITE and REGISTER start a trace of their own (an INVITE's
 * context goes on the request for the application); others get no span. The network's trace header
 * is removed from every one.
 */
export function traceNewRequest(req: SipRequest, transport: string): Span | undefined {
  dropTraceHeader(req.headers);
  if (!TRACED_NEW.has(req.method)) return undefined;
  const span = startSpan(`sip ${req.method}`, { kind: SpanKind.SERVER, parent: ROOT_CONTEXT, attributes: attributes(req.method, req.callId, transport) });
  if (req.method === 'INVITE') {
    const { traceparent } = injectContext(contextOf(span));
    if (traceparent) req.headers.set(TRACE_HEADER, traceparent);
  }
  return span;
}

/**
 * A request from the network inside a dialog: a server span in the dialog's trace, none when the
 * dialog has none (tracing off, a subscription). The network's trace header is removed.
 */
export function traceInDialogRequest(req: SipRequest, transport: string, dialogTrace: Context | undefined): Span | undefined {
  dropTraceHeader(req.headers);
  if (!dialogTrace) return undefined;
  return startSpan(`sip ${req.method}`, { kind: SpanKind.SERVER, parent: dialogTrace, attributes: attributes(req.method, req.callId, transport) });
}

/**
 * An application's request outside a dialog (its trace header already dropped: `traceparent`):
 * INVITE and REGISTER are client spans, children of the context the application named (its call's
 * span), root spans when it named none or an unreadable one; other methods get none.
 */
export function traceAppNewRequest(method: string, callId: string, transport: string, traceparent: string | undefined): Span | undefined {
  if (!TRACED_NEW.has(method)) return undefined;
  const parent = traceparent ? extractContext({ traceparent }, ROOT_CONTEXT) : ROOT_CONTEXT;
  return startSpan(`sip ${method}`, { kind: SpanKind.CLIENT, parent, attributes: attributes(method, callId, transport) });
}

/** An application's request inside a dialog: a client span in the dialog's trace, none when it has none. */
export function traceAppInDialog(method: string, callId: string, transport: string, dialogTrace: Context | undefined): Span | undefined {
  if (!dialogTrace || method === 'ACK') return undefined;
  return startSpan(`sip ${method}`, { kind: SpanKind.CLIENT, parent: dialogTrace, attributes: attributes(method, callId, transport) });
}

/** The context a dialog formed by `span`'s transaction keeps for the spans of its later requests (none for a no-op span: tracing off). */
export const dialogTraceOf = (span: Span | undefined): Context | undefined => (span && isSpanContextValid(span.spanContext()) ? contextOf(span) : undefined);

/**
 * Ends a span with the final status, or without one and `why` (`cancelled`, `proxied`, `not
 * answered`, `no answer`). A 5xx, and a client transaction that got no answer (`local`: the 408 or
 * 503 the stack made up), are errors; a 401/407 challenge is not.
 */
export function endSipSpan(span: Span, status: number | undefined, why?: string, local = false): void {
  if (!span.isRecording()) return span.end();
  if (status !== undefined && !local) span.setAttribute('sip.response.status_code', status);
  const outcome = local ? 'no answer' : why;
  if (outcome) span.setAttribute('openvoice.sip.outcome', outcome);
  if (local || (status === undefined ? why === 'not answered' : status >= 500)) failSpan(span, new Error(outcome ?? `SIP ${status}`));
  span.end();
}
