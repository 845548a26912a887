/**
 * The rtp_audio_* channel variables FreeSWITCH's set_stats (switch_core_media.c) writes on
 * uuid_set_media_stats, from what the engine counts of the channel's RTP (esl/README.md lists each
 * variable, its FreeSWITCH meaning and its source here). Only what the engine's counts give: the
 * others (in_raw_bytes, in_mean_interval, burst and loss rates...) are left out, never estimated; the
 * jitter variances stand on the engine's interarrival jitter (jitterVariances below).
 */
import { mosFromR } from '../core/quality/emodel';
import type { EndpointStats } from '../media-engine';

/**
 * FreeSWITCH's inbound call quality (switch_rtp.c do_mos): R, its "quality percentage", is the share
 * of received packets not outweighed by flaws, ⌊100 · (received − flaws) / received⌋, taken as 100
 * when out of 0..100 (no packet received yet: 0/0); flaws above the packets received are dropped to 0
 * first (do_mos zeroes them). MOS from R by the E-model's mapping (G.107 Annex B):
 * 1 + 0.035R + 7·10⁻⁶ · R(R − 60)(100 − R), which do_mos writes out and core/quality/emodel.ts's mosFromR
 * is (R here is always within 0..100, where the two agree).
 */
export function freeswitchQuality(received: number, flaws: number): { r: number; mos: number } {
  const counted = received < flaws ? 0 : flaws;
  let r = Math.trunc(((received - counted) / received) * 100);
  if (!Number.isFinite(r) || r < 0 || r > 100) r = 100;
  return { r, mos: mosFromR(r) };
}

/** set_stats' two formats: counters as integers (add_stat), the rest with two decimals (add_stat_double, `%0.2f`). */
const count = (n: number): string => String(Math.trunc(n));
const double = (x: number): string => x.toFixed(2);

/**
 * in_jitter_min_variance / in_jitter_max_variance: FreeSWITCH's (switch_rtp.c check_jitter) are the lowest
 * and highest running variance, ms², of the interval between packets' arrivals about its mean, over the
 * leg (the lowest: the first nonzero one). The engine keeps no arrival intervals; its RFC 3550 interarrival
 * jitter (ms) measures the same spread of arrivals against the sender's clock, so its square stands in for
 * the variance at each read, and the lowest and highest are kept across the channel's reads (`previous`:
 * the channel's variables, holding the last read's). For delays drawn uniformly FreeSWITCH's √variance
 * reads about 1.2 × the RFC 3550 jitter (a root mean square against a mean of absolute differences).
 */
export function jitterVariances(jitterMs: number, previous: ReadonlyMap<string, string>): { min: number; max: number } {
  const variance = Number.isFinite(jitterMs) && jitterMs > 0 ? jitterMs * jitterMs : 0;
  const before = (name: string) => Number(previous.get(`rtp_audio_in_jitter_${name}_variance`) ?? 0) || 0;
  const [min, max] = [before('min'), before('max')];
  return { min: variance > 0 && (min === 0 || variance < min) ? variance : min, max: Math.max(max, variance) };
}

/**
 * The variables (without the `rtp_audio_` prefix) and their values, from the engine's statistics of the
 * channel; `previous`: the channel's variables (the jitter variances' lowest and highest so far).
 */
export function mediaStatsVariables(s: EndpointStats, previous: ReadonlyMap<string, string> = new Map()): [string, string][] {
  const q = freeswitchQuality(s.packetsReceived, s.lost);
  const v = jitterVariances(s.jitterMs, previous);
  return [
    ['in_packet_count', count(s.packetsReceived)],
    // flaws: the packets missing by sequence number (switch_rtp.c adds each gap's `lost` to them); FreeSWITCH
    // adds a penalty for flaws on consecutive packets, which cumulative counts cannot tell: none here
    ['in_flaw_total', count(s.lost)],
    ['in_quality_percentage', double(q.r)],
    ['in_mos', double(q.mos)],
    ['in_jitter_min_variance', double(v.min)],
    ['in_jitter_max_variance', double(v.max)],
    ['out_packet_count', count(s.packetsSent)],
    ['out_media_bytes', count(s.octetsSent)],
    // RTP's fixed 12-byte header on each packet sent (the engine sends no CSRC list or extension)
    ['out_raw_bytes', count(s.octetsSent + 12 * s.packetsSent)],
  ];
}
