/**
 * Strict RTP (Asterisk's `strictrtp`, res_rtp_asterisk.c, adapted to our symmetric RTP): which source a leg takes
 * its RTP and RTCP from, and where it sends. The leg sends to the address the SDP names until a source is latched,
 * then to that source (the far end behind a NAT is answered where it really sends from). Once latched, a packet from
 * any other address or port is dropped before it touches the jitter buffer, the SSRC tracking, DTMF or the receive
 * statistics, and counted (`foreignDropped`): whoever can reach the port can no longer inject audio into a call or
 * reset its jitter buffer with a new SSRC ("RTP bleed").
 *
 * How a source is learnt (the choice, media-engine/README.md "Strict RTP"):
 * - the address and port the SDP names (kept apart from the latched one, `signalledPeer`; a host name once resolved): at its
 *   first packet (signalling named it, as Asterisk's learning takes its expected address at once), so a far end that
 *   is not behind a NAT loses nothing; and at any of its packets later, whatever is latched and however recently it
 *   sent: a source learnt by probation (below) while the party was quiet (hold, DTX), or before its first packet,
 *   cannot keep the party out when it comes back (it is dropped from then on, as any other);
 * - any other (a NAT's public side before the first latch; a new source after RELATCH_AFTER_MS without a packet from
 *   the latched one): after a probation of LEARN_MIN_SEQUENTIAL packets from that address and port, each the last
 *   one's sequence number + 1 (Asterisk's learning_min_sequential, default 4). The packets of its probation are
 *   dropped and counted: one spoofed packet, or a few out of sequence, cannot take a call, even after a pause; a far
 *   end behind a NAT (its SDP address is not where it sends from) loses its first 3 packets (60 ms). A packet from
 *   another source starts the probation over for that source; one from the latched source ends it.
 * - a raw-socket sender whose UDP source port is 0 (sipp's pcap play) cannot be answered: it is never latched to;
 *   its packets are taken while nothing is latched (as before strict RTP), and once a source is, only from that
 *   source's IP address: no ordinary socket sends from port 0, and a sender that can forge it (a raw socket) can
 *   forge the latched address too, so this opens nothing (a test's pcap beside its RTP party on one host).
 * - a new far end from SDP (re-INVITE) starts learning over (`signalled`).
 * RTCP is taken from anyone before a source is latched, then only from the latched source's IP address (on the RTCP
 * port any UDP port: a NAT maps the RTCP flow to its own; multiplexed on the RTP port, the latched address and port).
 * The C legs (native/rtp_legs.c `admit`) do the same, with the same state (native/leg-layout.ts LS.LATCHED, LS.CAND_*,
 * LS.SIGNALLED_*).
 */
import { LS } from '../native/leg-layout';
import { intToIpv4, peer, type Peer } from './rtp-transport';

/** silence from the latched source after which another source may take its place (after its probation) */
export const RELATCH_AFTER_MS = 1000;
/** packets in sequence a source other than the SDP's must send before it is latched (Asterisk's learning_min_sequential) */
export const LEARN_MIN_SEQUENTIAL = 4;

export class SourceLatch {
  /** where RTP goes: the SDP's far end until a source is latched, then that source */
  remote: Peer | null = null;
  /** where RTCP goes */
  remoteRtcp: Peer | null = null;
  latched = false;
  /** arrival (performance.now()) of the last packet from the latched source */
  lastFromRemote = 0;
  /** RTP packets dropped by source: from another source once latched, or of a source on probation (C counts them too) */
  foreignDropped = 0;
  /** RTCP packets dropped by source (RTCP is handled in JS only, also for a leg in C: not in its state) */
  rtcpDropped = 0;
  /**
   * The far end the SDP names (null: none): latched at any of its packets. A host name's `ip` is 0 until it
   * resolves: the session's lookup (`resolved`) or the send path's, which fills in this same peer while it is `remote`.
   */
  private signalledPeer: Peer | null = null;
  /** the source on probation: its address, its last sequence number, its packets in sequence so far (0: none) */
  private candIp = 0;
  private candPort = 0;
  private candSeq = 0;
  private candCount = 0;

  /** The far end the SDP names (first offer/answer, or a re-INVITE that moved it): learning starts over. */
  signalled(address: string, port: number, rtcpPort: number): void {
    this.remote = port ? peer(address, port) : null;
    this.remoteRtcp = port ? peer(address, rtcpPort) : null;
    this.signalledPeer = this.remote;
    this.latched = false;
    this.candCount = 0;
  }

  /** Whether the SDP named a host not resolved yet: a C leg, which holds the signalled address as a number, waits for it. */
  get signalledPending(): boolean {
    return this.signalledPeer !== null && this.signalledPeer.ip === 0;
  }

  /** Whether an RTP packet from `ip`:`port` with sequence number `seq`, arrived at `mono`, is taken; latches as it goes. */
  admit(ip: number, port: number, seq: number, mono: number): boolean {
    const r = this.remote;
    if (r !== null && ip === r.ip && port === r.port) {
      if (!this.latched) this.latch(ip, port, false); // the SDP's address: at its first packet
      this.lastFromRemote = mono;
      this.candCount = 0;
      return true;
    }
    const sig = this.signalledPeer;
    if (port !== 0 && sig !== null && ip === sig.ip && port === sig.port) {
      // the SDP's address, while another source is latched: it takes the latch back at once, RTCP with it
      this.latch(ip, port, true);
      this.lastFromRemote = mono;
      this.candCount = 0;
      return true;
    }
    if (port === 0) {
      // a raw-socket sender (sipp's pcap play): cannot be answered, never latched to; taken from the latched IP (no
      // ordinary socket sends from port 0, and one that can forge it can forge the latched address as well)
      if (!this.latched || (r !== null && ip === r.ip)) return true;
    } else if ((!this.latched || mono - this.lastFromRemote > RELATCH_AFTER_MS) && this.onProbation(ip, port, seq)) {
      this.latch(ip, port, false);
      this.lastFromRemote = mono;
      return true;
    }
    this.foreignDropped++;
    return false;
  }

  /** Notes a packet of a source that may be learnt; true once it sent LEARN_MIN_SEQUENTIAL in sequence (its probation ends). */
  private onProbation(ip: number, port: number, seq: number): boolean {
    if (this.candCount > 0 && ip === this.candIp && port === this.candPort && seq === ((this.candSeq + 1) & 0xffff)) this.candCount++;
    else {
      this.candIp = ip;
      this.candPort = port;
      this.candCount = 1;
    }
    this.candSeq = seq;
    if (this.candCount < LEARN_MIN_SEQUENTIAL) return false;
    this.candCount = 0;
    return true;
  }

  /** `rtcp`: RTCP goes to the source's port + 1 even if one was latched before (the signalled address taking it back) */
  private latch(ip: number, port: number, rtcp: boolean): void {
    const address = intToIpv4(ip);
    if (!this.latched || rtcp) this.remoteRtcp = { address, ip, port: port + 1 };
    this.remote = { address, ip, port };
    this.latched = true;
  }

  /** The source a C leg latched (legSource, c-legs.ts): taken as it stands there, before an RTCP packet is checked against it. */
  follow(latched: boolean, ip: number, port: number): void {
    this.latched = latched;
    const r = this.remote;
    if (r === null || r.ip !== ip || r.port !== port) this.remote = { address: intToIpv4(ip), ip, port };
  }

  /** Whether an RTCP packet from `ip`:`port` is taken (`mux`: it came on the RTP port). */
  admitRtcp(ip: number, port: number, mux: boolean): boolean {
    const r = this.remote;
    if (!this.latched || r === null || (ip === r.ip && (!mux || port === r.port))) return true;
    this.rtcpDropped++;
    return false;
  }

  /** The latch's part of a C leg's state (leg-layout.ts). */
  saveTo(v: Float64Array): void {
    v[LS.REMOTE_IP] = this.remote!.ip;
    v[LS.REMOTE_PORT] = this.remote!.port;
    v[LS.RTCP_IP] = this.remoteRtcp!.ip;
    v[LS.RTCP_PORT] = this.remoteRtcp!.port;
    v[LS.LATCHED] = +this.latched;
    v[LS.LAST_FROM_REMOTE] = this.lastFromRemote;
    v[LS.FOREIGN_DROPPED] = this.foreignDropped;
    v[LS.CAND_IP] = this.candIp;
    v[LS.CAND_PORT] = this.candPort;
    v[LS.CAND_SEQ] = this.candSeq;
    v[LS.CAND_COUNT] = this.candCount;
    v[LS.SIGNALLED_IP] = this.signalledPeer?.ip ?? 0;
    v[LS.SIGNALLED_PORT] = this.signalledPeer?.port ?? 0;
  }

  /** Takes the latch's part of the state a C leg hands back. */
  loadFrom(v: Float64Array): void {
    const ip = v[LS.REMOTE_IP] | 0;
    if (this.remote?.ip !== ip || this.remote.port !== v[LS.REMOTE_PORT]) this.remote = { address: intToIpv4(ip), ip, port: v[LS.REMOTE_PORT] };
    if (v[LS.RTCP_LATCHED]) this.remoteRtcp = { address: intToIpv4(v[LS.RTCP_IP] | 0), ip: v[LS.RTCP_IP] | 0, port: v[LS.RTCP_PORT] };
    this.latched = v[LS.LATCHED] !== 0;
    this.lastFromRemote = v[LS.LAST_FROM_REMOTE];
    this.foreignDropped = v[LS.FOREIGN_DROPPED];
    this.candIp = v[LS.CAND_IP] | 0;
    this.candPort = v[LS.CAND_PORT];
    this.candSeq = v[LS.CAND_SEQ];
    this.candCount = v[LS.CAND_COUNT];
    const [sip, sport] = [v[LS.SIGNALLED_IP] | 0, v[LS.SIGNALLED_PORT]];
    const sig = this.signalledPeer;
    // a C leg copies the signalled peer and never moves it: kept (a name it could not resolve stays to be resolved here)
    if (sig === null || sig.port !== sport) this.signalledPeer = sport ? { address: intToIpv4(sip), ip: sip, port: sport } : null;
    else if (sig.ip === 0) sig.ip = sip;
  }
}
