// Prometheus metrics of the SIP stack, in their own registry (merge it into a /metrics endpoint).
import { Counter, Gauge, Registry } from 'prom-client';

export const sipRegistry = new Registry();

export const sipMetrics = {
  requestsIn: new Counter({ name: 'sip_requests_received_total', help: 'SIP requests received, by method', labelNames: ['method'] as const, registers: [sipRegistry] }),
  requestsOut: new Counter({ name: 'sip_requests_sent_total', help: 'SIP requests sent, by method', labelNames: ['method'] as const, registers: [sipRegistry] }),
  responsesIn: new Counter({ name: 'sip_responses_received_total', help: 'SIP responses received, by method and status', labelNames: ['method', 'code'] as const, registers: [sipRegistry] }),
  responsesOut: new Counter({ name: 'sip_responses_sent_total', help: 'SIP responses sent, by method and status', labelNames: ['method', 'code'] as const, registers: [sipRegistry] }),
  retransmissions: new Counter({ name: 'sip_retransmissions_total', help: 'Retransmissions sent by transactions', labelNames: ['kind'] as const, registers: [sipRegistry] }),
  parseErrors: new Counter({ name: 'sip_parse_errors_total', help: 'Messages that failed to parse', labelNames: ['transport'] as const, registers: [sipRegistry] }),
  dropped: new Counter({ name: 'sip_dropped_total', help: 'Requests dropped by the security layer', labelNames: ['reason'] as const, registers: [sipRegistry] }),
  bans: new Counter({ name: 'sip_bans_total', help: 'Source address:ports and whole addresses banned for flooding', registers: [sipRegistry] }),
  overload: new Counter({ name: 'sip_overload_rejections_total', help: 'Requests answered 503 because of the transaction cap', registers: [sipRegistry] }),
  transactions: new Gauge({ name: 'sip_transactions_in_flight', help: 'Transactions in flight', labelNames: ['kind'] as const, registers: [sipRegistry] }),
};
