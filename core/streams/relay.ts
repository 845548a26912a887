/**
 * The internal relay between control-api and the media-app node that owns a call or conference.
 * Each node serves a WebSocket endpoint (loopback by default) and advertises it in Redis with a
 * per-start secret; control-api connects to `/relay/{kind}/{id}` with the secret in a header. On the
 * relay, binary messages are raw 8 kHz 16-bit LE PCM both ways (node → control-api one 320-byte
 * chunk per message); encapsulation happens at the edge, where the customer's socket is.
 */
export type StreamTarget = 'call' | 'conference';

export const RELAY_SECRET_HEADER = 'x-stream-relay-secret';
/** Seconds a node's advertisement lives without a refresh. */
export const RELAY_AD_TTL_SEC = 30;

export interface RelayAdvert {
  /** ws://host:port */
  url: string;
  secret: string;
}

/** Redis key (under REDIS_KEY_PREFIX) of a node's relay advertisement. */
export const relayAdKey = (nodeId: string): string => `stream-relay:${nodeId}`;

/** `inboundOnly`: the call's own audio (what the caller says) instead of both parties mixed (Twilio streams). */
export const relayPath = (target: StreamTarget, id: string, inboundOnly = false): string => `/relay/${target}/${id}${inboundOnly ? '?mix=in' : ''}`;

export function parseRelayPath(path: string): { target: StreamTarget; id: string } | null {
  const m = /^\/relay\/(call|conference)\/([0-9a-fA-F-]{36})$/.exec(path);
  return m ? { target: m[1] as StreamTarget, id: m[2]!.toLowerCase() } : null;
}

/** The node's first text message: the tap is open and audio follows. */
export const RELAY_READY = 'ready';
/** control-api → node (Twilio streams): drop the injected audio not yet played. */
export const RELAY_CLEAR = 'clear';
/** node → control-api (Twilio streams, `?mix=in`): a digit of the caller, as text `dtmf:5`. */
export const relayDtmf = (digit: string): string => `dtmf:${digit}`;
export function parseRelayDtmf(text: string): string | null {
  const m = /^dtmf:([0-9A-D#*])$/.exec(text);
  return m ? m[1]! : null;
}

/** Close codes on the relay (private range): why the node refused or ended the stream. */
export const RELAY_CLOSE = {
  /** the audio source ended (call hung up, conference gone) */
  ended: 1000,
  unauthorized: 4401,
  /** the call or conference is not live on this node */
  notFound: 4404,
  /** it exists but has no media to stream yet */
  notReady: 4409,
  /** the node's media backend cannot stream it (a conference on the fsmrf backend): the reason says so */
  unsupported: 4501,
} as const;
