/**
 * Webhook deliveries as spans (docs/observability.md "Traces"): each HTTP attempt is a `webhook
 * deliver` span (kind client) in the trace of the event it delivers. The event carries the context
 * active where it was published (core/events/bus.ts); the delivery is sent later, maybe by another
 * copy of control-api, so the reader keeps that context in Redis by event id until the drain takes
 * it (a day at most). With tracing off nothing is kept and the spans are no-ops. The customer's
 * endpoint gets no `traceparent`: our trace ids stay ours.
 */
import type { Redis } from 'ioredis';
import type { PlatformEvent } from '../../core/events/bus';
import { extractContext, failSpan, ROOT_CONTEXT, SpanKind, startSpan, tracingOn, type Span } from '../../core/tracing';
import type { WebhookDeliveryRow } from '../../core/repos/webhook-deliveries';
import type { AttemptResult } from './send';

const KEEP_SEC = 86_400;

export class DeliveryTraces {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(eventId: string): string {
    return `${this.prefix}webhook-trace:${eventId}`;
  }

  /** Keeps the trace context of each delivery's event: [delivery event id, the event it came from]. */
  async keep(pairs: [string, PlatformEvent][]): Promise<void> {
    if (!tracingOn()) return;
    const withTrace = pairs.filter(([, e]) => e.trace);
    if (!withTrace.length) return;
    const m = this.redis.multi();
    for (const [id, e] of withTrace) m.set(this.key(id), JSON.stringify(e.trace), 'EX', KEEP_SEC);
    await m.exec();
  }

  /** Starts the span of one attempt, in its event's trace when that was kept (else a trace of its own). */
  async start(d: WebhookDeliveryRow, attempt: number): Promise<Span> {
    let parent = ROOT_CONTEXT;
    if (tracingOn()) {
      const kept = await this.redis.get(this.key(d.event_id)).catch(() => null);
      if (kept) parent = extractContext(parseCarrier(kept));
    }
    return startSpan('webhook deliver', {
      kind: SpanKind.CLIENT,
      parent,
      attributes: {
        'openvoice.webhook.event_type': d.event_type,
        'openvoice.webhook.target': d.target,
        'openvoice.webhook.attempt': attempt,
        'openvoice.webhook.delivery_id': d.id,
        'openvoice.customer.id': d.customer_id,
        'http.request.method': d.method || 'POST',
      },
    });
  }

  /** Ends an attempt's span with its HTTP status and outcome (`delivered`, `retry`, `failed`, `refused`). */
  end(span: Span, r: AttemptResult, outcome: 'delivered' | 'retry' | 'failed' | 'refused'): void {
    if (r.kind !== 'refused' && r.status > 0) span.setAttribute('http.response.status_code', r.status);
    span.setAttribute('openvoice.webhook.outcome', outcome);
    if (r.kind !== 'delivered') failSpan(span, new Error(r.error));
    span.end();
  }
}

function parseCarrier(s: string): Record<string, string> | undefined {
  try {
    const v = JSON.parse(s) as unknown;
    if (v && typeof v === 'object' && typeof (v as { traceparent?: unknown }).traceparent === 'string') {
      const { traceparent, tracestate } = v as { traceparent: string; tracestate?: unknown };
      return { traceparent, ...(typeof tracestate === 'string' ? { tracestate } : {}) };
    }
  } catch {
    // not ours: a trace of its own
  }
  return undefined;
}
