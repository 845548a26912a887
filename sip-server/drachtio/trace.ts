/**
 * An incoming INVITE's server transaction as a span (docs/observability.md "Traces"): `sip INVITE`
 * (kind server) from the request handed to its application to the final response (or the CANCEL,
 * or the application never answering), with the Call-ID and the final status. Its context reaches
 * media-app in the request itself: sip-server removes any `X-Openvoice-Traceparent` the network sent
 * and adds its own, so the call's spans there become children of this one. With tracing off the span
 * is a no-op and no header is added.
 */
import { contextOf, failSpan, injectContext, ROOT_CONTEXT, SpanKind, startSpan, type Span } from '../../core/tracing';
import { SIP_TRACE_HEADER as TRACE_HEADER } from '../../core/sip/trace-header';
import type { SipRequest } from '../message';

/** Starts the INVITE's span (a trace of its own) and puts its context on the request for the application. */
export function traceInvite(req: SipRequest, transport: string): Span {
  if (req.headers.has(TRACE_HEADER)) req.headers.delete(TRACE_HEADER);
  const span = startSpan('sip INVITE', {
    kind: SpanKind.SERVER,
    parent: ROOT_CONTEXT,
    attributes: { 'sip.method': 'INVITE', 'sip.call_id': req.callId, 'network.transport': transport.toLowerCase() },
  });
  const { traceparent } = injectContext(contextOf(span));
  if (traceparent) req.headers.set(TRACE_HEADER, traceparent);
  return span;
}

/** Ends the span with the final status, or without one and `why` (`cancelled`, `proxied`, `not answered`). */
export function endInvite(span: Span, status: number | undefined, why?: string): void {
  if (!span.isRecording()) return span.end();
  if (status !== undefined) span.setAttribute('sip.response.status_code', status);
  if (why) span.setAttribute('openvoice.sip.outcome', why);
  if (status === undefined ? why === 'not answered' : status >= 500) failSpan(span, new Error(why ?? `SIP ${status}`));
  span.end();
}
