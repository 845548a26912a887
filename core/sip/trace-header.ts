/**
 * The SIP header on which sip-server hands an incoming INVITE's trace context (W3C traceparent) to
 * its application (sip-server/drachtio/trace.ts → media-app/inbound/router.ts). Only sip-server sets
 * it: it removes one a caller sent, and nothing sends it to the network.
 */
export const SIP_TRACE_HEADER = 'X-Openvoice-Traceparent';
