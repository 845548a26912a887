/**
 * The SIP header that carries a trace context (W3C traceparent) between sip-server and its
 * application over the drachtio connection, both ways: on an incoming INVITE, the context of
 * sip-server's `sip INVITE` span (sip-server/drachtio/trace.ts → media-app/inbound/router.ts); on an
 * application's INVITE, its call's span (media-app/outbound/uac.ts → sip-server's client span). Only
 * these two set it: sip-server removes one the network sent, and removes the application's before
 * the wire.
 */
export const SIP_TRACE_HEADER = 'X-Openvoice-Traceparent';
