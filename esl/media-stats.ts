/**
 * The rtp_audio_* channel variables FreeSWITCH's set_stats (switch_core_media.c) writes on
 * uuid_set_media_stats, from what the engine counts of the channel's RTP (esl/README.md lists each
 * variable, its FreeSWITCH meaning and its source here). Only what the engine's counts give: the
 * others (in_raw_bytes, the jitter variances, burst and loss rates...) are left out, never estimated.
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

/** The variables (without the `rtp_audio_` prefix) and their values, from the engine's statistics of the channel. */
export function mediaStatsVariables(s: EndpointStats): [string, string][] {
  const q = freeswitchQuality(s.packetsReceived, s.lost);
  return [
    ['in_packet_count', count(s.packetsReceived)],
    // flaws: the packets missing by sequence number (switch_rtp.c adds each gap's `lost` to them); FreeSWITCH
    // adds a penalty for flaws on consecutive packets, which cumulative counts cannot tell: none here
    ['in_flaw_total', count(s.lost)],
    ['in_quality_percentage', double(q.r)],
    ['in_mos', double(q.mos)],
    ['out_packet_count', count(s.packetsSent)],
    ['out_media_bytes', count(s.octetsSent)],
    // RTP's fixed 12-byte header on each packet sent (the engine sends no CSRC list or extension)
    ['out_raw_bytes', count(s.octetsSent + 12 * s.packetsSent)],
  ];
}
