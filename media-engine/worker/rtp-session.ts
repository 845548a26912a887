/**
 * One leg's RTP/RTCP transport inside a worker: its own UDP socket pair, symmetric RTP (latching to where
 * the far end sends from), G.711 by payload type or the leg's wideband codec (leg-codec.ts: G.722, Opus),
 * RFC 4733 at the codec's clock, a jitter buffer at the leg's PCM rate and RTCP SR/RR every 5 s.
 * The sockets are the worker's kind (rtp-transport.ts): native ones are read when the leg is served.
 */
import { decodeG711Range, encodeG711Range, type G711Law } from '../../core/audio/g711';
import { JitterBuffer } from '../jitter/jitter-buffer';
import { isRtcp, newRtpHeader, readRtpHeader, writeRtpHeader } from '../rtp-packet/packet';
import { ReceiveStats } from '../rtp-packet/receive-stats';
import { parseRtcp } from '../rtp-packet/rtcp';
import { TelephoneEventReceiver, TelephoneEventSender, type DetectedEvent } from '../rtp-packet/telephone-event';
import type { NegotiatedMedia } from '../sdp/sdp';
import { LegCodec } from './leg-codec';
import { opusTicks, PassMapping, PassQueue } from './opus-pass';
import { createTransport, intToIpv4, ipv4ToInt, resolvePeer, TIME_ORIGIN, type RtpTransport } from './rtp-transport';
import { SourceLatch } from './rtp-source';
import type { RtpCapture } from './rtp-capture';
import { LS } from '../native/leg-layout';
import { noteRtcp, ourReport, receivedCounts, type RtcpReceived, type RtpCounters } from './rtp-counters';

/** the jitter buffer starts two frames behind the first packet, one given back after a calm 10 s (media-engine/README.md: why not one) */
const JITTER_START_FRAMES = 2;

export type { RtcpReceived, RtpCounters } from './rtp-counters';

const FRAME = 160;
const RTCP_INTERVAL_MS = 5000;

/** Packets in flight per leg: a send the kernel queues keeps its buffer until it has gone out. */
const SEND_RING = 4;
const MAX_PACKET = 12 + 1500; // the longest Opus payload we encode is 1275 bytes; G.711 at 80 ms is 640

/** RTCP is read every this many receives (native sockets): it comes every few seconds */
const RTCP_POLL_EVERY = 10;

export class RtpSession {
  private readonly rtp: RtpTransport;
  private readonly rtcp: RtpTransport;
  private rtcpPoll = 0;
  /** preallocated packet buffers, used in turn */
  private readonly sendBufs = Array.from({ length: SEND_RING }, () => Buffer.allocUnsafeSlow(MAX_PACKET));
  /** a view of each send buffer of the last packet's length: dgram sends a whole Buffer without slicing it */
  private readonly sendViews = this.sendBufs.map((b) => b.subarray(0, 0));
  /** each send buffer's payload (from byte 12): G.711 is encoded straight into the packet, not copied into it */
  private readonly sendPayloads = this.sendBufs.map((b) => new Uint8Array(b.buffer, b.byteOffset + 12, MAX_PACKET - 12));
  private sendIdx = 0;
  /** the receive path's header and decoded samples, reused for every packet */
  private readonly rxHeader = newRtpHeader();
  private readonly rxSamples = new Int16Array(2880); // 120 ms at 16 kHz: the longest Opus packet we decode
  /** the last sequence number received from the current source (-1: none yet), to see a single loss */
  private lastSeqIn = -1;
  private recovered = 0;
  private codecDecoded = 0;
  private codecEncoded = 0;
  /** Opus pass-through: packets this leg sent on as they arrived at its peer (`passSink`), not at its own send phase */
  private forwardedOnArrival = 0;
  /** forwardFrom is running (a flush inside it must not forward again) */
  private forwarding = false;
  /** Opus pass-through (opus-pass.ts), set by the leg each tick: what this leg receives is queued for its peer as it came */
  passThrough = false;
  passQueue: PassQueue | null = null;
  /** the leg's hand-off of a queued packet to its peer as it arrives (the peer's forwardFrom), set once by the leg */
  passSink: ((now: number) => void) | null = null;
  /** the sending side: the source's numbers moved onto our stream */
  private readonly passMap = new PassMapping();
  /** the wideband codec (G.722, Opus), null on a G.711 leg */
  wide: LegCodec | null = null;
  /** the leg's PCM rate and 20 ms frame at it (8000/160 for G.711) */
  rate = 8000;
  frame = FRAME;
  /** RTP clock ticks per ms and per 20 ms (8/160; 48/960 for Opus) */
  ticksPerMs = 8;
  private frameTicks = FRAME;
  /** the G.711 law sent on a G.711 leg */
  private law: G711Law = 'PCMU';
  private readonly sendWide = (bytes: number, ticks: number): void => {
    this.codecEncoded++;
    if (this.sending) this.send(false, this.media!.payloadType, this.ts, this.wide!.payload, bytes);
    this.ts = (this.ts + ticks) | 0;
  };
  media: NegotiatedMedia | null = null;
  /** symmetric RTP, strict (rtp-source.ts): the source latched, where we send, what other sources sent and was dropped */
  readonly source = new SourceLatch();
  /** a leg in C: brings the session's latched source up to date (c-legs.ts: three numbers, not the state), before RTCP is checked against it */
  sourceFromC: (() => void) | null = null;
  /** performance.now() of the last RTCP packet (0: none) */
  lastRtcp = 0;
  private readonly ssrc = (Math.random() * 0x100000000) >>> 0;
  /** the SSRC and the RTP clock as signed 32-bit integers (small integers for V8: no heap number per packet) */
  private readonly ssrcI32 = this.ssrc | 0;
  private seq = (Math.random() * 0x10000) >>> 0;
  private ts = (Math.random() * 0x100000000) | 0;
  private eventTs = 0;
  private pending = new Int16Array(FRAME * 4); // samples waiting for a full ptime packet
  private pendingLen = 0;
  jitter = new JitterBuffer(1, 8, JITTER_START_FRAMES);
  readonly stats = new ReceiveStats();
  readonly dtmfOut = new TelephoneEventSender();
  readonly dtmfIn: TelephoneEventReceiver;
  /** set once any RFC 4733 packet arrived: the far end signals digits out of band */
  sawTelephoneEvent = false;
  private packetsSent = 0;
  private octetsSent = 0;
  private nextRtcpAt = Date.now() + 1000 + Math.random() * RTCP_INTERVAL_MS;
  private closed = false;
  remoteSsrc: number | null = null;
  /** the leg's RTP capture (rtp-capture.ts), null unless one was started: one check per packet */
  capture: RtpCapture | null = null;
  /** our address as a 32-bit integer, for the capture's records (0 when bound to every interface) */
  private readonly localIp: number;
  readonly rtcpIn: RtcpReceived = { senderReports: 0, receiverReports: 0, lastSender: null, lastReportOnUs: null, rttMs: null, voipMetrics: null, malformed: 0 };

  constructor(
    readonly address: string,
    readonly port: number,
    onDtmf: (e: DetectedEvent & { ssrc: number }) => void,
  ) {
    this.dtmfIn = new TelephoneEventReceiver((e) => onDtmf({ ...e, ssrc: this.remoteSsrc ?? 0 }));
    this.localIp = ipv4ToInt(address) ?? 0;
    this.rtp = createTransport((buf, len, ip, port, arrival) => this.onRtp(buf, len, ip, port, arrival));
    this.rtcp = createTransport((buf, len, ip, port, arrival) => {
      if (this.capture !== null) this.capture.add(arrival, ip, port, this.localIp, this.port + 1, buf, len, true);
      this.onRtcp(buf, len, ip, port, arrival);
    });
  }

  /** Binds RTP on `port` and RTCP on `port + 1`; rejects with the socket error (EADDRINUSE). */
  async open(): Promise<void> {
    try {
      await this.rtp.open(this.address, this.port);
      await this.rtcp.open(this.address, this.port + 1);
    } catch (e) {
      await this.close();
      throw e;
    }
  }

  setMedia(media: NegotiatedMedia): void {
    this.setCodec(media);
    const changed = !this.media || this.media.remoteAddress !== media.remoteAddress || this.media.remotePort !== media.remotePort;
    this.media = media;
    if (!changed) return;
    this.source.signalled(media.remoteAddress, media.remotePort, media.remoteRtcpPort);
    // the SDP named a host: looked up at once for RTP and RTCP (strict RTP, a C leg's send); nothing goes to it before
    const { remote, remoteRtcp } = this.source;
    if (remote !== null && remoteRtcp !== null) resolvePeer(remote, remoteRtcp);
  }

  /** The codec state for `media`: a new wideband codec (and a jitter buffer at its rate) when it changed. */
  private setCodec(media: NegotiatedMedia): void {
    const wideband = media.codec === 'G722' || media.codec === 'opus';
    if (this.wide && (!wideband || this.wide.differs(media))) {
      this.wide.close();
      this.wide = null;
    }
    if (wideband && !this.wide) this.wide = new LegCodec(media);
    const rate = this.wide ? this.wide.rate : 8000;
    if (rate !== this.rate) this.jitter = new JitterBuffer(1, 8, JITTER_START_FRAMES, rate / 50);
    this.rate = rate;
    this.frame = rate / 50;
    if (media.codec === 'PCMA' || media.codec === 'PCMU') this.law = media.codec;
    this.ticksPerMs = media.clockRate / 1000;
    this.frameTicks = media.clockRate / 50;
    this.stats.ticksPerMs = this.ticksPerMs;
    this.dtmfIn.ticksPerMs = media.dtmfClockRate / 1000;
    this.dtmfOut.clockRate = media.dtmfClockRate;
  }

  get sending(): boolean {
    return !!this.media && this.media.send && !!this.source.remote && !this.closed;
  }

  /** performance.now() of the last packet from the latched source */
  get lastFromRemote(): number {
    return this.source.lastFromRemote;
  }

  /** `mono`: the packet's arrival on performance.now()'s clock (the transport's; a heap number, the only allocation of this path) */
  private onRtp(msg: Buffer, len: number, fromIp: number, fromPort: number, mono: number): void {
    if (this.closed) return;
    const rtcp = isRtcp(msg, len);
    if (this.capture !== null) this.capture.add(mono, fromIp, fromPort, this.localIp, this.port, msg, len, rtcp);
    if (rtcp) return this.onRtcp(msg, len, fromIp, fromPort, mono, true); // rtcp-mux peers
    const p = this.rxHeader;
    if (!readRtpHeader(msg, p, len) || !this.media) return;
    // symmetric RTP, strict (rtp-source.ts): answer to where the media really comes from (NAT), latched at the SDP's
    // address at once or another after its probation; once latched, what another source sends is dropped here.
    // Never to port 0, which cannot be answered (raw-socket senders such as sipp's pcap play leave it unset)
    if (!this.source.admit(fromIp, fromPort, p.sequenceNumber, mono) || !this.media.receive) return;
    if (this.remoteSsrc !== p.ssrc >>> 0) {
      // a new source (SSRC change after re-INVITE, transfer, restart): start over
      this.remoteSsrc = p.ssrc >>> 0;
      this.jitter.reset();
      this.wide?.reset();
      this.lastSeqIn = -1;
      this.passQueue?.restart();
    }
    this.stats.onPacket(p.ssrc, p.sequenceNumber, p.timestamp, Math.round(mono * this.ticksPerMs) | 0);
    // exactly one packet missing just before this one (2 ahead of the last; later ones reordered are not)
    const step = this.lastSeqIn < 0 ? 1 : (p.sequenceNumber - this.lastSeqIn) & 0xffff;
    if (step > 0 && step < 0x8000) this.lastSeqIn = p.sequenceNumber;
    if (this.media.dtmfPayloadType !== null && p.payloadType === this.media.dtmfPayloadType) {
      this.sawTelephoneEvent = true;
      this.dtmfIn.onPacket(p.timestamp >>> 0, msg.subarray(p.payloadOffset, p.payloadEnd), TIME_ORIGIN + mono);
      return;
    }
    const bytes = p.payloadEnd - p.payloadOffset;
    if (this.wide) {
      if (p.payloadType !== this.media.payloadType || bytes === 0) return;
      if (this.passThrough) {
        (this.passQueue ??= new PassQueue()).push(msg, p.payloadOffset, p.payloadEnd, p.sequenceNumber, p.timestamp, p.marker);
        return this.passSink?.(TIME_ORIGIN + mono);
      }
      // a single lost packet comes back from this one's in-band FEC (Opus), before this one is decoded
      if (step === 2 && this.wide.hasFec) {
        const r = this.wide.recover(msg, p.payloadOffset, bytes, this.rxSamples);
        this.codecDecoded++;
        if (r > 0) {
          this.jitter.push(this.wide.sampleTsOf((p.timestamp - this.wide.ticksOf(r)) | 0), this.rxSamples, r);
          this.recovered++;
        }
      }
      const n = this.wide.decode(msg, p.payloadOffset, bytes, this.rxSamples);
      this.codecDecoded++;
      if (n > 0) this.jitter.push(this.wide.sampleTsOf(p.timestamp), this.rxSamples, n);
      return;
    }
    let law: G711Law;
    if (p.payloadType === 0) law = 'PCMU';
    else if (p.payloadType === 8) law = 'PCMA';
    else if (p.payloadType === this.media.payloadType && (this.media.codec === 'PCMU' || this.media.codec === 'PCMA')) law = this.media.codec;
    else return; // comfort noise and unknown formats are ignored
    if (bytes === 0 || bytes > 1600) return;
    // decoded straight into the jitter buffer's entry (no copy through a scratch frame)
    const into = this.jitter.reserve(p.timestamp, bytes);
    if (into !== null) decodeG711Range(law, msg, p.payloadOffset, p.payloadEnd, into);
  }

  private onRtcp(msg: Buffer, len: number, fromIp: number, fromPort: number, arrival: number, mux = false): void {
    this.sourceFromC?.();
    if (!this.source.admitRtcp(fromIp, fromPort, mux)) return;
    this.lastRtcp = arrival;
    const pkts = parseRtcp(Buffer.from(msg.subarray(0, len))); // a copy: a native socket's buffer is reused
    if (!pkts) {
      this.rtcpIn.malformed++;
      return;
    }
    const to = this.source.remoteRtcp;
    if (!to || to.ip !== fromIp) this.source.remoteRtcp = { address: intToIpv4(fromIp), ip: fromIp, port: fromPort };
    noteRtcp(pkts, this.rtcpIn, this.stats, this.ssrc, TIME_ORIGIN + arrival); // when it came, not when the tick read it (DLSR, RTT)
  }

  /** Advances the RTP clock over ticks the worker could not run, and the playout point with it (jitter-buffer.ts: skip). */
  skip(ticks: number): void {
    this.ts = (this.ts + ticks * this.frameTicks) | 0;
    this.jitter.skip(ticks);
  }

  /** Pops this tick's inbound audio into `out` (`frame` samples at `rate`); false when there is none. */
  receiveFrame(out: Int16Array, now: number): boolean {
    this.rtp.poll();
    if (++this.rtcpPoll >= RTCP_POLL_EVERY) {
      this.rtcpPoll = 0;
      this.rtcp.poll();
    }
    this.dtmfIn.flush(now);
    return this.jitter.pop(out);
  }

  /**
   * A wideband leg's 8 kHz audio (G.711 peer, 8 kHz prompt or mix): coded as it is where the codec takes
   * it (G.722's 8 kHz mode, Opus's 8 kHz encoder), else brought up by `up` and coded with the frame
   * marked narrow (Opus: narrow band asked of its 16 kHz encoder).
   */
  sendNarrowFrame(frame8k: Int16Array, up: { up(from: Int16Array): Int16Array }, now: number): void {
    const w = this.wide;
    if (w !== null && !this.dtmfOut.busy && w.takesNarrow) {
      if (this.capture !== null) this.capture.sendTime = now;
      w.encodeNarrowFrame(frame8k, this.sendWide);
      if (now >= this.nextRtcpAt) this.sendRtcp(now);
      return;
    }
    this.sendFrame(up.up(frame8k), now, true);
  }

  /** Sends this tick's audio (`frame` at `rate`; `narrow`: brought up from 8 kHz) or a queued telephone-event; timestamps run on hold. */
  sendFrame(frame: Int16Array, now: number, narrow = false): void {
    if (this.capture !== null) this.capture.sendTime = now;
    // 20 ms on the telephone-events' clock (the codec's unless the far end named another)
    const ev = this.dtmfOut.busy ? this.dtmfOut.next(this.dtmfOut.clockRate / 50) : null;
    if (ev) {
      if (ev.startOfEvent) this.eventTs = this.ts;
      if (this.sending && this.media!.dtmfPayloadType !== null) this.send(ev.marker, this.media!.dtmfPayloadType, this.eventTs, ev.payload, ev.payload.length);
      this.ts = (this.ts + this.frameTicks) | 0;
      this.pendingLen = 0;
      this.wide?.dropPending();
    } else if (this.wide) {
      this.wide.encodeFrame(frame, this.sendWide, narrow);
    } else {
      const ptimeSamples = Math.min(FRAME * 4, Math.max(80, ((this.media?.ptime ?? 20) * 8) | 0));
      if (ptimeSamples === FRAME && this.pendingLen === 0) {
        if (this.sending) this.send(false, this.media!.payloadType, this.ts, null, encodeG711Range(this.law, frame, 0, FRAME, this.sendPayloads[this.sendIdx]));
        this.ts = (this.ts + FRAME) | 0;
      } else {
        // other ptimes: re-chunk 20 ms frames into packets of ptime
        this.pending.set(frame, this.pendingLen);
        this.pendingLen += FRAME;
        while (this.pendingLen >= ptimeSamples) {
          if (this.sending) this.send(false, this.media!.payloadType, this.ts, null, encodeG711Range(this.law, this.pending, 0, ptimeSamples, this.sendPayloads[this.sendIdx]));
          this.ts = (this.ts + ptimeSamples) | 0;
          this.pending.copyWithin(0, ptimeSamples, this.pendingLen);
          this.pendingLen -= ptimeSamples;
        }
      }
    }
    if (now >= this.nextRtcpAt) this.sendRtcp(now);
  }

  /** Forwarding on or off (the leg decides each tick); packets still queued when it ends are decoded as usual. */
  setPassThrough(on: boolean): void {
    if (on === this.passThrough) return;
    this.passThrough = on;
    if (!on && this.passQueue) {
      if (this.wide?.media.codec === 'opus') this.passQueue.drain(Infinity, this.decodeQueued);
      else this.passQueue.clear();
    }
  }

  private readonly decodeQueued = (payload: Uint8Array, len: number, _seq: number, ts: number): void => {
    const n = this.wide!.decode(payload, 0, len, this.rxSamples);
    this.codecDecoded++;
    if (n > 0) this.jitter.push(this.wide!.sampleTsOf(ts), this.rxSamples, n);
  };

  /**
   * Sends on what `src` received (Opus pass-through) as it came, under our SSRC, numbers moved onto our stream (anchored
   * where it stands when forwarding starts or the source restarts). `arrived`: as a packet arrives (not when the ring is full).
   */
  forwardFrom(src: RtpSession, now: number, arrived = false): void {
    const q = src.passQueue;
    if (this.forwarding || (arrived && (q === null || !this.rtp.roomFor(q.size)))) return;
    if (this.capture !== null) this.capture.sendTime = now;
    if (q) {
      // frames we sent ourselves since the last forwarded packet, or a new source: start a new mapping
      this.passMap.check(this.seq, this.ts, q.epoch);
      this.forwarding = true;
      try {
        const n = q.drain(SEND_RING, this.forwardOne);
        if (arrived) this.forwardedOnArrival += n;
      } finally {
        this.forwarding = false;
      }
    }
    if (now >= this.nextRtcpAt) this.sendRtcp(now);
  }

  private readonly forwardOne = (payload: Uint8Array, len: number, seq: number, ts: number, marker: boolean): void => {
    const m = this.passMap;
    m.map(this.seq, this.ts, seq, ts, opusTicks(payload, 0, len));
    this.seq = m.outSeq;
    if (this.sending) this.send(marker, this.media!.payloadType, m.outTs, payload, len);
    this.seq = m.streamSeq;
    this.ts = m.streamTs;
  };

  /** Sends `payloadLen` bytes of `payload` as one packet; `payload` null: they are already in `sendPayloads[sendIdx]`. */
  private send(marker: boolean, pt: number, ts: number, payload: Uint8Array | null, payloadLen: number): void {
    const to = this.source.remote!;
    // a host name not resolved yet (a failed lookup is asked again at each send), or 0.0.0.0: nothing is sent, nothing counted
    if (to.ip === 0) return resolvePeer(to);
    const i = this.sendIdx;
    this.sendIdx = (i + 1) % SEND_RING;
    if (payload !== null) {
      const to = this.sendPayloads[i];
      if (payloadLen === payload.length) to.set(payload);
      else for (let k = 0; k < payloadLen; k++) to[k] = payload[k];
    }
    writeRtpHeader(this.sendBufs[i], marker, pt, this.seq, ts, this.ssrcI32);
    const len = 12 + payloadLen;
    let view = this.sendViews[i];
    if (view.length !== len) view = this.sendViews[i] = this.sendBufs[i].subarray(0, len);
    this.seq = (this.seq + 1) & 0xffff;
    this.packetsSent++;
    this.octetsSent += payloadLen;
    this.rtp.send(view, to);
    if (this.capture !== null) this.capture.add(-1, this.localIp, this.port, to.ip, to.port, view, len, false);
  }

  /** The ring's socket of a 'uring' session, -1 on the other kinds: what its C leg is attached by (c-legs.ts). */
  get ringFd(): number {
    return this.rtp.ringFd ?? -1;
  }

  /**
   * What a C leg can carry of the session as it stands (c-legs.ts), with a known address, nothing queued or captured:
   * 'g711' (G.711 at 20 ms both ways), 'pass' (Opus sending on its peer's packets as they come), else null.
   */
  get cLeg(): 'g711' | 'pass' | null {
    const m = this.media;
    const { remote, remoteRtcp } = this.source;
    if (m === null || !m.send || !m.receive || remote === null || remote.ip === 0 || remoteRtcp === null || remoteRtcp.ip === 0 || this.source.signalledPending) return null;
    if (this.closed || this.capture !== null || this.dtmfOut.busy || this.ringFd < 0) return null;
    if (this.wide === null) return (m.codec === 'PCMU' || m.codec === 'PCMA') && (m.ptime ?? 20) === 20 && this.pendingLen === 0 ? 'g711' : null;
    return m.codec === 'opus' && this.passThrough && !this.passQueue?.size ? 'pass' : null;
  }

  /**
   * The session's state for its C leg (native/leg-layout.ts; only while `cLeg`; a pass-through leg's decoded frames, which nothing
   * reads, are dropped). `source`: a pass-through leg's peer, whose packets it sends on (its mapping of their numbers goes to C).
   */
  saveTo(v: Float64Array, samples: Int16Array, source: RtpSession | null = null): void {
    const m = this.media!;
    v[LS.PASS] = +(this.wide !== null);
    if (this.wide !== null) this.jitter.reset();
    v[LS.TICKS_PER_MS] = this.ticksPerMs;
    v[LS.FORWARDED] = this.forwardedOnArrival;
    // the mapping goes on in C when nothing we sent ourselves and no restart of the source (its queue's epoch, 0
    // before it has one) came since its last packet
    v[LS.PASS_MAPPED] = +(source !== null && this.passMap.holds(this.seq, this.ts, source.passQueue?.epoch ?? 0));
    v[LS.PASS_SEQ_DELTA] = this.passMap.seqDelta;
    v[LS.PASS_TS_DELTA] = this.passMap.tsDelta;
    v[LS.SSRC] = this.ssrc;
    v[LS.SEQ] = this.seq;
    v[LS.TS] = this.ts;
    v[LS.PACKETS_SENT] = this.packetsSent;
    v[LS.OCTETS_SENT] = this.octetsSent;
    this.source.saveTo(v);
    v[LS.REMOTE_SSRC] = this.remoteSsrc ?? -1;
    v[LS.SAW_EVENT] = +this.sawTelephoneEvent;
    v[LS.LAW_OUT] = this.law === 'PCMU' ? 0 : 8;
    v[LS.PT] = m.payloadType;
    v[LS.DTMF_PT] = m.dtmfPayloadType ?? -1;
    v[LS.PT_LAW] = m.codec === 'PCMU' ? 0 : m.codec === 'PCMA' ? 8 : -1;
    v[LS.NEXT_RTCP] = this.nextRtcpAt;
    this.stats.saveTo(v);
    this.jitter.saveTo(v, samples);
    this.dtmfIn.saveTo(v);
  }

  /** Takes the state its C leg hands back (a read for stats or RTCP, or the leg coming back to JS); `source` as for saveTo. */
  loadFrom(v: Float64Array, samples: Int16Array, source: RtpSession | null = null): void {
    this.seq = v[LS.SEQ];
    this.ts = v[LS.TS] | 0;
    this.packetsSent = v[LS.PACKETS_SENT];
    this.octetsSent = v[LS.OCTETS_SENT];
    this.source.loadFrom(v);
    this.remoteSsrc = v[LS.REMOTE_SSRC] < 0 ? null : v[LS.REMOTE_SSRC];
    this.sawTelephoneEvent = v[LS.SAW_EVENT] !== 0;
    this.nextRtcpAt = v[LS.NEXT_RTCP];
    this.forwardedOnArrival = v[LS.FORWARDED];
    this.lastSeqIn = -1; // (Opus FEC: the packets C took are not known here)
    // the mapping C had goes on where our stream stands, for the source's restarts as they are counted now
    const held = source !== null && v[LS.PASS_MAPPED] !== 0;
    if (v[LS.PASS] !== 0) this.passMap.load(this.seq, this.ts, source?.passQueue?.epoch ?? 0, held, v[LS.PASS_SEQ_DELTA], v[LS.PASS_TS_DELTA]);
    this.stats.loadFrom(v);
    this.jitter.loadFrom(v, samples);
    this.dtmfIn.loadFrom(v);
  }

  /** Sends an RTCP report now (SR, or RR before we sent anything) and schedules the next one. */
  sendRtcp(now: number): void {
    this.nextRtcpAt = now + RTCP_INTERVAL_MS * (0.5 + Math.random()); // RFC 3550 §6.3.1 randomisation
    const to = this.source.remoteRtcp;
    if (!to || this.closed || !this.media?.send) return;
    if (to.ip === 0) return resolvePeer(to);
    const pkt = ourReport(this.ssrc, now, this.ts, this.packetsSent, this.octetsSent, this.stats.reportBlock(now));
    this.rtcp.send(pkt, to);
    if (this.capture !== null) this.capture.add(-1, this.localIp, this.port + 1, to.ip, to.port, pkt, pkt.length, true);
  }

  counters(): RtpCounters {
    return {
      packetsSent: this.packetsSent,
      octetsSent: this.octetsSent,
      ...receivedCounts(this.stats, this.jitter.stats),
      recovered: this.recovered,
      codecDecoded: this.codecDecoded,
      codecEncoded: this.codecEncoded,
      forwardedOnArrival: this.forwardedOnArrival,
      foreignDropped: this.source.foreignDropped + this.source.rtcpDropped,
    };
  }

  /** Closes both sockets; resolves once the ports are free again. */
  close(): Promise<void> {
    this.closed = true;
    this.wide?.close();
    this.wide = null;
    return Promise.all([this.rtp.close(), this.rtcp.close()]).then(() => undefined);
  }
}
