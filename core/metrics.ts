/**
 * Prometheus metrics that code shared by several processes increments (egress policy, webhook
 * delivery, call hangups, CDR export). One registry per process, `platformRegistry`; control-api's
 * /metrics serves it next to its HTTP metrics (control-api/ops.ts createMetrics), media-app's
 * MEDIA_APP_METRICS_LISTEN serves it alone (core/metrics-server.ts). Names are listed in
 * docs/observability.md and used by deploy/prometheus/alerts.yml and deploy/grafana/; a test
 * (test/observability/names.test.ts) checks that every name used there appears in a real scrape.
 */
import { Counter, Gauge, Registry } from 'prom-client';

export const platformRegistry = new Registry();

export const platformMetrics = {
  /** Connections the egress policy refused on a customer's behalf, by reason (core/net/errors.ts RefusalReason). */
  egressRefusals: new Counter({
    name: 'egress_refusals_total',
    help: 'Outbound connections refused by the egress policy, by reason',
    labelNames: ['reason'] as const,
    registers: [platformRegistry],
  }),
  /** Webhook attempts by outcome: delivered, retry (5xx / transport error, tried again), failed (gave up), refused. */
  webhookAttempts: new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by outcome (delivered, retry, failed, refused)',
    labelNames: ['outcome'] as const,
    registers: [platformRegistry],
  }),
  /** Calls ended (the one guarded hangup of core/repos/calls.ts), by direction and hangup_reason; counted by the process that ended it. */
  callsEnded: new Counter({
    name: 'calls_ended_total',
    help: 'Calls ended, by direction and hangup_reason (failed = the call could not be set up)',
    labelNames: ['direction', 'hangup_reason'] as const,
    registers: [platformRegistry],
  }),
  /** Rows written by GET /v1.0/calls/export, by format. */
  cdrExportRows: new Counter({
    name: 'cdr_export_rows_total',
    help: 'Call detail records written by the CDR export, by format',
    labelNames: ['format'] as const,
    registers: [platformRegistry],
  }),
  /** Exports streaming now (a client that went away stops its export: this falls back). */
  cdrExportsActive: new Gauge({
    name: 'cdr_exports_in_progress',
    help: 'CDR exports streaming now',
    registers: [platformRegistry],
  }),
};

// Every known labelled series exists from the start (value 0; prom-client creates a child's value
// only on its first inc), so rate() and the alert rules work before the first event.
for (const r of ['url', 'scheme', 'credentials', 'unresolvable', 'redirect', 'self', 'private', 'loopback']) platformMetrics.egressRefusals.labels(r).inc(0);
for (const o of ['delivered', 'retry', 'failed', 'refused']) platformMetrics.webhookAttempts.labels(o).inc(0);
for (const f of ['csv', 'jsonl']) platformMetrics.cdrExportRows.labels(f).inc(0);
for (const d of ['incoming', 'outgoing']) for (const r of ['normal', 'failed', 'busy', 'cancel', 'timeout', 'noanswer', 'dialout', 'amd']) platformMetrics.callsEnded.labels(d, r).inc(0);
