/**
 * What a leg's RTP session counts and what its far end reported in RTCP (rtp-session.ts keeps them;
 * the engine hands them out in stats and the endpoint's events).
 */
import type { ReceiveStats } from '../rtp-packet/receive-stats';
import type { JitterStats } from '../jitter/jitter-buffer';
import { ntpFromMs, ntpMiddle, roundTripMs, serializeReceiverReport, serializeSenderReport, type ReportBlock, type RtcpPacket, type VoipMetrics } from '../rtp-packet/rtcp';

/** What the far end told us in RTCP: its sender info, and its report on our stream. */
export interface RtcpReceived {
  senderReports: number;
  receiverReports: number;
  /** from the last SR: what the far end says it sent */
  lastSender: { ssrc: number; packetCount: number; octetCount: number } | null;
  /** the far end's last report block about our SSRC (loss, jitter as it sees them) */
  lastReportOnUs: ReportBlock | null;
  /** round-trip time from the last report block on us that carried an LSR (our SR's time), ms */
  rttMs: number | null;
  /** the far end's last RTCP-XR VoIP metrics block about our SSRC (RFC 3611 §4.7) */
  voipMetrics: VoipMetrics | null;
  /** compound packets that did not parse (ignored) */
  malformed: number;
}

export interface RtpCounters {
  packetsSent: number;
  octetsSent: number;
  /** packets received from the current source, duplicates excluded */
  packetsReceived: number;
  /** packets expected from the current source's sequence numbers (RFC 3550 A.3) */
  packetsExpected: number;
  lost: number;
  jitterMs: number;
  /** packets that came after a later one, and repeated ones */
  outOfOrder: number;
  duplicates: number;
  concealed: number;
  /** lost packets rebuilt from the next one's in-band FEC (Opus) */
  recovered: number;
  /** packets too late for their playout time (discarded by the jitter buffer) */
  late: number;
  /** frames due while the worker stalled, dropped (not the far end's loss: not in the leg's MOS) */
  stalled: number;
  /** packets the jitter buffer had no room for (discarded) */
  dropped: number;
  /** wideband codec work: packets decoded (FEC recoveries included) and encoded; G.711's tables are not counted */
  codecDecoded: number;
  codecEncoded: number;
  /** Opus pass-through: packets this leg sent on as they arrived at its peer (the rest at its own send phase) */
  forwardedOnArrival: number;
  /**
   * Strict RTP (worker/rtp-source.ts): RTP and RTCP packets dropped by their source before anything read them, from an
   * address or port other than the latched far end's, or from a source on probation (a far end behind a NAT: its first 3)
   */
  foreignDropped: number;
}

/** A compound RTCP packet's news, noted in `into` (and `stats`' last SR, for our reports' DLSR); `ourSsrc`: what reports on us. */
export function noteRtcp(pkts: RtcpPacket[], into: RtcpReceived, stats: ReceiveStats, ourSsrc: number, arrivalMs: number): void {
  for (const p of pkts) {
    if (p.type === 'SR') {
      stats.lastSrNtpMiddle = ntpMiddle(p.sender);
      stats.lastSrArrivalMs = arrivalMs;
      into.senderReports++;
      into.lastSender = { ssrc: p.ssrc, packetCount: p.sender.packetCount, octetCount: p.sender.octetCount };
    } else if (p.type === 'RR') into.receiverReports++;
    if (p.type === 'SR' || p.type === 'RR') {
      const mine = p.reports.find((r) => r.ssrc === ourSsrc);
      if (mine) {
        into.lastReportOnUs = { ...mine };
        const rtt = roundTripMs(mine, arrivalMs);
        if (rtt !== null) into.rttMs = Math.round(rtt * 10) / 10;
      }
    } else if (p.type === 'XR') {
      const mine = p.voip.find((m) => m.ssrc === ourSsrc);
      if (mine) into.voipMetrics = mine;
    }
  }
}

/** Our RTCP report at `now` (RFC 3550 §6.4): an SR once we have sent (our stream stands at `ts`), else an RR; with the block on the source. */
export function ourReport(ssrc: number, now: number, ts: number, packetsSent: number, octetsSent: number, block: ReportBlock | null): Buffer {
  const reports = block ? [block] : [];
  if (packetsSent === 0) return serializeReceiverReport(ssrc, reports);
  return serializeSenderReport(ssrc, { ...ntpFromMs(now), rtpTimestamp: ts >>> 0, packetCount: packetsSent, octetCount: octetsSent }, reports);
}

/** The receive side of a session's counters: its sequence-number statistics and its jitter buffer's. */
export function receivedCounts(
  stats: ReceiveStats,
  jitter: JitterStats,
): Pick<RtpCounters, 'packetsReceived' | 'packetsExpected' | 'lost' | 'jitterMs' | 'outOfOrder' | 'duplicates' | 'concealed' | 'late' | 'stalled' | 'dropped'> {
  return {
    packetsReceived: stats.received,
    packetsExpected: stats.expected,
    lost: Math.max(0, stats.lost),
    jitterMs: Math.round(stats.jitterMs * 100) / 100,
    outOfOrder: stats.outOfOrder,
    duplicates: stats.duplicates,
    concealed: jitter.concealed,
    late: jitter.late,
    stalled: jitter.stalled,
    dropped: jitter.dropped,
  };
}
