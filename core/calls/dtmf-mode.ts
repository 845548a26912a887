/**
 * How the platform sends DTMF to a party (a trunk's calls, an extension's phones): RFC 4733
 * telephone-events (the default), SIP INFO (application/dtmf-relay), or tones in the audio.
 * A party set to rfc4733 whose SDP did not offer telephone-event gets INFO instead.
 */
export const DTMF_MODES = ['rfc4733', 'info', 'inband'] as const;
export type DtmfMode = (typeof DTMF_MODES)[number];
export const DEFAULT_DTMF_MODE: DtmfMode = 'rfc4733';
