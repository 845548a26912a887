/**
 * Prometheus metrics that code shared by several processes increments (egress policy, webhook
 * delivery, call hangups and answers, a node's live calls, CDR export). One registry per process, `platformRegistry`; control-api's
 * /metrics serves it next to its HTTP metrics (control-api/ops.ts createMetrics), media-app's
 * MEDIA_APP_METRICS_LISTEN serves it alone (core/metrics-server.ts). Names are listed in
 * docs/observability.md and used by deploy/prometheus/alerts.yml and deploy/grafana/; a test
 * (test/observability/names.test.ts) checks that every name used there appears in a real scrape.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

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
  /**
   * Calls ended that had been answered (tm_progressing set), by direction; counted with calls_ended_total
   * by the same guarded hangup, so answered / ended over a window is the answer-seizure ratio.
   */
  callsAnswered: new Counter({
    name: 'calls_answered_total',
    help: 'Calls ended that had been answered, by direction (with calls_ended_total: the answer-seizure ratio)',
    labelNames: ['direction'] as const,
    registers: [platformRegistry],
  }),
  /** Calls this process holds now: a media-app node's live calls (media-app/call/registry.ts), by direction. */
  callsActive: new Gauge({
    name: 'calls_active',
    help: 'Calls held by this media-app node now, by direction',
    labelNames: ['direction'] as const,
    registers: [platformRegistry],
  }),
  /** Rows written by GET /v1.0/calls/export, by format. */
  cdrExportRows: new Counter({
    name: 'cdr_export_rows_total',
    help: 'Call detail records written by the CDR export, by format',
    labelNames: ['format'] as const,
    registers: [platformRegistry],
  }),
  /** Call quality (media-app, core/quality): one observation per leg, direction and 5 s sample; labels codec and direction (in, out) only. */
  qualityMos: new Histogram({
    name: 'call_quality_mos',
    help: 'MOS (ITU-T G.107 E-model) of 5 s call-leg samples, by codec and direction',
    labelNames: ['codec', 'direction'] as const,
    buckets: [1.5, 2, 2.5, 3, 3.5, 3.8, 4, 4.2, 4.3, 4.4],
    registers: [platformRegistry],
  }),
  qualityLoss: new Histogram({
    name: 'call_quality_loss_percent',
    help: 'Packet loss % of 5 s call-leg samples, by codec and direction',
    labelNames: ['codec', 'direction'] as const,
    buckets: [0.1, 0.5, 1, 2, 3, 5, 10, 20],
    registers: [platformRegistry],
  }),
  qualityJitter: new Histogram({
    name: 'call_quality_jitter_ms',
    help: 'RFC 3550 interarrival jitter (ms) of 5 s call-leg samples, by codec and direction',
    labelNames: ['codec', 'direction'] as const,
    buckets: [2, 5, 10, 20, 30, 50, 100, 200],
    registers: [platformRegistry],
  }),
  qualityRtt: new Histogram({
    name: 'call_quality_rtt_ms',
    help: 'RTCP round-trip time (ms) of 5 s call-leg samples, by codec and direction',
    labelNames: ['codec', 'direction'] as const,
    buckets: [10, 25, 50, 100, 150, 200, 300, 500, 1000],
    registers: [platformRegistry],
  }),
  /**
   * Strict RTP (media-engine/worker/rtp-source.ts): packets of a call leg dropped by their source, the engine's
   * `foreignDropped` (getStats) added at each quality sample (media-app/call/quality.ts). Spoofing, RTP bleed, a NAT'd far end's first 3.
   */
  rtpForeignDropped: new Counter({
    name: 'rtp_foreign_dropped_total',
    help: "RTP and RTCP packets dropped by their source (strict RTP: not the leg's latched far end, or a source on probation)",
    registers: [platformRegistry],
  }),
  /** call_quality_alarm events raised, by metric and direction. */
  qualityAlarms: new Counter({
    name: 'call_quality_alarms_total',
    help: 'Call-quality alarms raised (MOS, loss, jitter, RTT over their thresholds), by metric and direction',
    labelNames: ['metric', 'direction'] as const,
    registers: [platformRegistry],
  }),
  /** A voice AI turn's latency by stage (media-app/ai/voice.ts; docs/ai.md "Turn-taking"): one observation per stage and turn. */
  aiTurnLatency: new Histogram({
    name: 'ai_turn_latency_ms',
    help: "Voice AI turn latency (ms) by stage: end_of_turn_wait, stt_final, llm_first_token, tts_first_byte, first_rtp (caller's speech end to the first reply audio out)",
    labelNames: ['stage'] as const,
    buckets: [25, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000],
    registers: [platformRegistry],
  }),
  /** Interruptions in voice AI sessions: who interrupted whom, and whether the agent stopped (a backchannel is ignored). */
  aiInterruptions: new Counter({
    name: 'ai_interruptions_total',
    help: 'Voice AI interruptions by who interrupted (by) whom (of) and outcome (stopped, ignored: a backchannel; overlap: the agent began over the caller)',
    labelNames: ['by', 'of', 'outcome'] as const,
    registers: [platformRegistry],
  }),
  aiPreemptions: new Counter({
    name: 'ai_preemptions_total',
    help: 'Voice AI replies asked for before the end of the turn, by outcome (committed: the turn ended with the same words; discarded)',
    labelNames: ['outcome'] as const,
    registers: [platformRegistry],
  }),
  /** Calls whose party's receive watch (MEDIA_INACTIVITY_TIMEOUT_MS) could not be armed (media-app/call/dead-party.ts). */
  mediaWatchUnarmed: new Counter({
    name: 'media_watch_unarmed_total',
    help: "Calls whose party's media-timeout watch could not be armed (unsupported: the media backend cannot watch; failed), so a dead party is not ended",
    labelNames: ['reason'] as const,
    registers: [platformRegistry],
  }),
  /** Exports streaming now (a client that went away stops its export: this falls back). */
  cdrExportsActive: new Gauge({
    name: 'cdr_exports_in_progress',
    help: 'CDR exports streaming now',
    registers: [platformRegistry],
  }),
  /** Twilio redirects of a call just answered waiting now for its flow to start (control-api/twilio/flow-wait.ts). */
  twilioRedirectsWaiting: new Gauge({
    name: 'twilio_redirects_waiting',
    help: 'Twilio Calls redirects waiting now for the flow of a call just answered to start',
    registers: [platformRegistry],
  }),
};

// Every known labelled series exists from the start (value 0; prom-client creates a child's value
// only on its first inc), so rate() and the alert rules work before the first event.
for (const r of ['url', 'scheme', 'credentials', 'unresolvable', 'redirect', 'self', 'private', 'loopback']) platformMetrics.egressRefusals.labels(r).inc(0);
for (const o of ['delivered', 'retry', 'failed', 'refused']) platformMetrics.webhookAttempts.labels(o).inc(0);
for (const f of ['csv', 'jsonl']) platformMetrics.cdrExportRows.labels(f).inc(0);
for (const r of ['unsupported', 'failed']) platformMetrics.mediaWatchUnarmed.labels(r).inc(0);
for (const m of ['mos', 'loss_pct', 'jitter_ms', 'rtt_ms']) for (const d of ['in', 'out']) platformMetrics.qualityAlarms.labels(m, d).inc(0);
for (const st of ['end_of_turn_wait', 'stt_final', 'llm_first_token', 'tts_first_byte', 'first_rtp']) platformMetrics.aiTurnLatency.zero({ stage: st });
for (const [by, of, o] of [
  ['caller', 'agent', 'stopped'],
  ['caller', 'agent', 'ignored'],
  ['agent', 'caller', 'overlap'],
] as const)
  platformMetrics.aiInterruptions.labels(by, of, o).inc(0);
for (const d of ['incoming', 'outgoing'])
  for (const r of ['normal', 'failed', 'busy', 'cancel', 'timeout', 'noanswer', 'dialout', 'amd', 'session_expired', 'media_timeout']) platformMetrics.callsEnded.labels(d, r).inc(0);
for (const d of ['incoming', 'outgoing']) {
  platformMetrics.callsAnswered.labels(d).inc(0);
  platformMetrics.callsActive.labels(d).set(0);
}
