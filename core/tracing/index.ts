/**
 * OpenTelemetry tracing, one trace per call (docs/observability.md "Traces"). Off unless the operator
 * sets `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` (the standard variables;
 * `OTEL_SDK_DISABLED=true` turns it off again): then spans go over OTLP HTTP/protobuf through a batch
 * processor, and `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS` and
 * `OTEL_BSP_SCHEDULE_DELAY` apply. Off, the API is OpenTelemetry's no-op:
 * a span costs one call that returns a shared non-recording span, and nothing is exported.
 *
 * Context crosses processes as W3C `traceparent`: in the BullMQ command envelope (control-api →
 * media-app) and in each event on the stream (to its webhook deliveries, control-api/webhooks/trace.ts). Within a process it follows async calls (AsyncLocalStorage). The endpoint is the
 * operator's, not a customer's: it is not subject to the egress policy.
 */
import { context, propagation, trace, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Attributes, type Context, type Span, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

export { ROOT_CONTEXT, SpanKind, SpanStatusCode, type Attributes, type Context, type Span };

/** Where spans go, or null when tracing is off (read from the standard OTEL_* variables). */
export function tracesEndpoint(env: NodeJS.ProcessEnv = process.env): string | null {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return null;
  const own = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (own) return own;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : null;
}

export interface Tracing {
  readonly endpoint: string;
  /** Exports what is pending and stops (on process stop). */
  shutdown(): Promise<void>;
  /** Exports what is pending (tests). */
  flush(): Promise<void>;
}

/** An OTLP endpoint that is not an http(s) URL: the process refuses to start, naming the variable. */
export class TracingConfigError extends Error {}

let active: Tracing | null = null;

/**
 * Starts tracing for this process under `service` (OTEL_SERVICE_NAME wins), or returns null when
 * the environment leaves it off. Once per process; a second call returns the first.
 */
export function startTracing(service: string, env: NodeJS.ProcessEnv = process.env): Tracing | null {
  if (active) return active;
  const endpoint = tracesEndpoint(env);
  if (!endpoint) return null;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new TracingConfigError(`OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not a URL: ${endpoint}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TracingConfigError(`OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be http or https, not ${url.protocol}`);
  // OTEL_RESOURCE_ATTRIBUTES first, then the service name (OTEL_SERVICE_NAME, else ours) over it
  const resource = detectResources({ detectors: [envDetector] }).merge(resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME?.trim() || service }));
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
  const exporter = new OTLPTraceExporter({ url: url.toString() });
  const processor = new BatchSpanProcessor({ exporter, ...(Number.isFinite(delay) && delay > 0 ? { scheduledDelayMillis: delay } : {}) });
  const provider = new TracerProvider({ resource, spanProcessors: [processor] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  active = {
    endpoint: url.toString(),
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
      active = null;
    },
  };
  return active;
}

/** True for a real span's context (a no-op span's, with tracing off, is invalid). */
export const isSpanContextValid = (c: SpanContext): boolean => trace.isSpanContextValid(c);

/** True once startTracing has started the SDK in this process (until its shutdown). */
export const tracingOn = (): boolean => active !== null;

const tracer = () => trace.getTracer('openvoice');

/** Starts a span (child of `parent`, else of the active context; at `startTime`, epoch ms, else now); the caller ends it. */
export function startSpan(name: string, opts: { kind?: SpanKind; attributes?: Attributes; parent?: Context; startTime?: number } = {}): Span {
  return tracer().startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, startTime: opts.startTime }, opts.parent ?? context.active());
}

/** Runs `fn` with `span` as the active span (its children and log lines see it). */
export function withActive<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** A context whose active span is `span` (to inject it, or parent spans on it, outside its callbacks). */
export const contextOf = (span: Span): Context => trace.setSpan(ROOT_CONTEXT, span);

/** Runs `fn` with `ctx` active (e.g. a context extracted from a peer's traceparent). */
export function withContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/** The active context, to parent spans started later from callbacks that run outside it. */
export const activeContext = (): Context => context.active();

/** Ends a span as failed with the error's message (no stack: it may carry customer data). */
export function failSpan(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** Runs `fn` in a span of its own, ended when it settles; a throw marks it failed. */
export async function inSpan<T>(name: string, opts: { kind?: SpanKind; attributes?: Attributes; parent?: Context }, fn: (span: Span) => Promise<T>): Promise<T> {
  const span = startSpan(name, opts);
  try {
    return await withActive(span, () => fn(span));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Marks a moment of the active span (a step inside one action: the TwiML document fetched, compiled); nothing when no span records. */
export function spanEvent(name: string, attributes?: Attributes): void {
  trace.getActiveSpan()?.addEvent(name, attributes);
}

/** The active context as W3C headers (`traceparent`); empty when tracing is off or nothing is active. */
export function injectContext(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/** The context a `traceparent` carrier names over `base` (the active context); `base` itself when it names none or a malformed one. */
export function extractContext(carrier: Record<string, string> | undefined, base: Context = context.active()): Context {
  return carrier ? propagation.extract(base, carrier) : base;
}

/** `trace_id` and `span_id` of the active span for a log line, or nothing (pino mixin). */
export function logIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const c = span.spanContext();
  return trace.isSpanContextValid(c) ? { trace_id: c.traceId, span_id: c.spanId } : {};
}
