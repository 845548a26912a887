/**
 * One span per REST request (core/tracing), the root of a call's trace when the request starts one
 * (`POST /v1.0/calls`: the command it sends carries the trace to media-app). A caller's W3C
 * `traceparent` is honoured, so a customer's own trace continues into ours. The span is named by the
 * route pattern, never the path (ids) or the query (tokens). With tracing off (not started when the app is built) this is skipped.
 */
import type { RequestHandler } from 'express';
import { extractContext, SpanKind, startSpan, tracingOn, withActive } from '../../core/tracing';
import { routePattern } from './route-pattern';

export function traceRequests(): RequestHandler | null {
  if (!tracingOn()) return null;
  return (req, res, next) => {
    const parent = typeof req.headers.traceparent === 'string' ? extractContext({ traceparent: req.headers.traceparent }) : undefined;
    const span = startSpan(`${req.method}`, {
      kind: SpanKind.SERVER,
      parent,
      attributes: { 'http.request.method': req.method, 'openvoice.request.id': req.requestId ?? '' },
    });
    res.once('close', () => {
      const route = routePattern(req);
      if (route) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      span.end();
    });
    withActive(span, next);
  };
}
