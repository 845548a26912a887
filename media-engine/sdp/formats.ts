/**
 * The audio formats the engine negotiates (PCMU, PCMA, G.722, Opus and telephone-event at 8000 and
 * 48000) as they appear in SDP: rtpmap names, RTP clocks, payload types of our own offers, and the
 * Opus fmtp of RFC 7587 (ours, and the far end's read into encoder options).
 */
import { codecAvailability } from '../codecs';
import type { CodecName, OpusOptions } from '../codecs';

export type AudioCodecName = CodecName;

/** Every codec name the engine knows, in the order used where nothing else is said. */
export const AUDIO_CODECS: readonly AudioCodecName[] = ['PCMU', 'PCMA', 'G722', 'opus'];

export interface FormatSpec {
  /** the rtpmap encoding name as we write it */
  encoding: string;
  clockRate: number;
  /** channels written in the rtpmap (Opus is always "/2", RFC 7587) */
  rtpmapChannels: 1 | 2;
  /** the payload type of our own offers */
  offerPt: number;
}

export const FORMATS: Record<AudioCodecName, FormatSpec> = {
  PCMU: { encoding: 'PCMU', clockRate: 8000, rtpmapChannels: 1, offerPt: 0 },
  PCMA: { encoding: 'PCMA', clockRate: 8000, rtpmapChannels: 1, offerPt: 8 },
  G722: { encoding: 'G722', clockRate: 8000, rtpmapChannels: 1, offerPt: 9 },
  opus: { encoding: 'opus', clockRate: 48000, rtpmapChannels: 2, offerPt: 111 },
};

/** telephone-event payload types of our own offers, per clock. */
export const DTMF_OFFER_PT: Record<8000 | 48000, number> = { 8000: 101, 48000: 110 };

/**
 * Opus is decoded and encoded at 16 kHz in the engine (wideband, the rate G.722 and speech
 * recognition use): we ask the far end not to send more than that.
 */
export const OPUS_PCM_RATE = 16000;
export const OPUS_FMTP = `maxplaybackrate=${OPUS_PCM_RATE};sprop-maxcapturerate=${OPUS_PCM_RATE};stereo=0;useinbandfec=1`;

/** The codec an rtpmap entry is (case-insensitive name, clock, channels), or null. */
export function codecOf(encoding: string, clockRate: number, channels: number): AudioCodecName | null {
  const e = encoding.toUpperCase();
  if ((e === 'PCMU' || e === 'PCMA' || e === 'G722') && clockRate === 8000 && channels === 1) return e;
  // RFC 7587 says "opus/48000/2"; a missing channel count is taken as the same stream
  if (e === 'OPUS' && clockRate === 48000 && (channels === 2 || channels === 1)) return 'opus';
  return null;
}

/** `prefs` without the codecs this machine cannot run (the native module did not build). */
export function usableCodecs(prefs: readonly AudioCodecName[]): AudioCodecName[] {
  const avail = codecAvailability();
  return prefs.filter((c, i) => prefs.indexOf(c) === i && avail[c]?.available === true);
}

/** Our fmtp for a format in an offer or answer. */
export function localFmtp(codec: AudioCodecName): string | undefined {
  return codec === 'opus' ? OPUS_FMTP : undefined;
}

function fmtpParams(fmtp: string | undefined): Map<string, string> {
  const m = new Map<string, string>();
  for (const part of (fmtp ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) m.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return m;
}

function intIn(v: string | undefined, min: number, max: number): number | undefined {
  if (v === undefined || !/^\d+$/.test(v)) return undefined;
  const n = Number(v);
  return n >= min && n <= max ? n : undefined;
}

/**
 * Our Opus encoder's options from the far end's fmtp (what it wants to receive, RFC 7587 §6.1):
 * maxplaybackrate, maxaveragebitrate, useinbandfec, usedtx. Values out of range are ignored.
 */
export function opusOptionsFrom(remoteFmtp: string | undefined, ptime: number): OpusOptions {
  const p = fmtpParams(remoteFmtp);
  const opts: OpusOptions = { sampleRate: OPUS_PCM_RATE, ptime: [10, 20, 40, 60].includes(ptime) ? ptime : 20 };
  const rate = intIn(p.get('maxplaybackrate'), 8000, 48000);
  if (rate !== undefined) opts.maxPlaybackRate = Math.min(rate, OPUS_PCM_RATE);
  const br = intIn(p.get('maxaveragebitrate'), 6000, 510000);
  if (br !== undefined) opts.maxAverageBitrate = br;
  if (p.get('useinbandfec') === '0') opts.useInbandFec = false;
  if (p.get('usedtx') === '1') opts.useDtx = true;
  return opts;
}
