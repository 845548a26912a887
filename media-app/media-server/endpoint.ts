/**
 * A call leg's media endpoint as media-app's call code sees it (README.md beside): the subset of
 * media-engine's Endpoint class that media-app uses, as an interface. The embedded engine's Endpoint
 * satisfies it unchanged (`tsc --noEmit` proves it: MediaPort's createEndpoint returns one); the fsmrf
 * backend's FsmrfCallEndpoint implements it over drachtio-fsmrf, and refuses what needs the engine's
 * own taps (the AI voice path, echo cancellation, RTP capture, quality stats...)
 * with MediaBackendUnsupported: never a silent no-op.
 */
import type { EventEmitter } from 'node:events';
import { Endpoint } from '../../media-engine';
import type {
  AmdRequest,
  AmdResult,
  BeepResult,
  Conference,
  DtmfForm,
  EchoCancelOptions,
  EndpointEvents,
  EndpointStats,
  ForkOptions,
  ForkStats,
  NegotiatedMedia,
  PlayCollectOptions,
  PlayCollectResult,
  PlayResult,
  PlaySpec,
  RecordOptions,
  RecordResult,
  Recording,
  TranscribeOptions,
  VadTapOptions,
} from '../../media-engine';

import { MediaBackendUnsupported } from './port';
import type { MediaFork } from './tap';

type Direction = 'in' | 'out' | 'both';

/**
 * What a leg's music is (media-app/call/media-state.ts): a hold's (the party is held: on fsmrf a room's
 * member is taken out of the mix) or music on hold (the party still heard where it is; the music in place
 * of what it hears).
 */
export type MusicKind = 'hold' | 'moh';

/**
 * What a switch reports of a leg's RTP (the fsmrf backend: FreeSWITCH's rtp_audio_* variables, after
 * uuid_set_media_stats): its counts and its own inbound quality figures, and nothing it has no source
 * for (the jitter buffer, RTCP, the RFC 3550 receive jitter): those are absent by type, never filled in.
 * `source` tells it from the engine's; call quality (call/quality.ts) measures the leg with it.
 */
export interface SwitchRtpCounts {
  source: 'switch';
  /** rtp_audio_in_packet_count */
  packetsReceived: number;
  /** rtp_audio_in_flaw_total: packets missing by sequence number (FreeSWITCH adds a penalty for consecutive flaws) */
  lost: number;
  /** rtp_audio_in_quality_percentage: FreeSWITCH's R (switch_rtp.c do_mos), 100 · (received − flaws) / received */
  qualityPercentage: number;
  /** rtp_audio_in_mos: FreeSWITCH's MOS of the audio received, from that R (1 to 4.5) */
  mos: number;
  /** √rtp_audio_in_jitter_max_variance: the spread (ms) of the packets' arrival intervals, the switch's worst of the leg so far */
  interarrivalJitterMs: number;
  /** rtp_audio_out_packet_count, rtp_audio_out_media_bytes */
  packetsSent: number;
  octetsSent: number;
  /** the negotiated codec and packet time (rtp_use_codec_name / _ptime); null when the switch names none */
  codec: string | null;
  ptimeMs: number;
}

/** A leg's figures: the engine's whole EndpointStats, or a switch's counts. */
export type CallEndpointStats = EndpointStats | SwitchRtpCounts;

/** Whether `s` are the engine's figures (call quality's E-model from them), not a switch's counts and MOS. */
export function engineStats(s: CallEndpointStats): s is EndpointStats {
  return !('source' in s);
}

/** One leg's media: SDP, prompts, digits, recording, bridge, conference, mute, and the engine's taps. */
export interface CallEndpoint extends EventEmitter<EndpointEvents> {
  readonly id: string;
  readonly uuid: string;
  /** our side's SDP and where our RTP is */
  readonly local: { sdp: string; address: string; port: number };
  /** the far end's SDP and what was negotiated with it (null before it is known) */
  readonly remote: { sdp: string | null; media: NegotiatedMedia | null };
  destroyed: boolean;
  /** the embedded engine's conference the leg is in */
  conference: Conference | null;

  /** Applies the far end's SDP (answer, re-INVITE); resolves with our SDP. */
  modify(remoteSdp: string): Promise<string>;
  /** An offer of ours for a re-INVITE we send or answer (the engine's fresh one; on fsmrf the switch's SDP re-offered: fsmrf/reoffer.ts). */
  offer(): Promise<string>;
  /** The receive watch: 'rxTimeout' when the far end sends nothing for `timeoutMs`. */
  watchRx(timeoutMs: number): Promise<void>;

  /**
   * Why a prompt (play, say, playCollect) sent to the leg now would not be played, or null; absent: never
   * (the embedded engine). On fsmrf while the switch's conference application runs on the leg, which
   * holds back any prompt until it leaves the room (fsmrf/room-app.ts): its play refuses it then too.
   */
  promptRefusal?(): MediaBackendUnsupported | null;
  /**
   * Why the music of a hold or music on hold would not be played now, or null; absent: promptRefusal's
   * answer. On fsmrf a member of a switch room gets its music from the room (fsmrf/member-hold.ts):
   * refused only while it is joining.
   */
  holdMusicRefusal?(): MediaBackendUnsupported | null;
  /**
   * Plays the music of a hold or music on hold once, as `kind` says (media-app/call/media-state.ts loops
   * it); absent: play. On fsmrf a member of a switch room gets it from the room (fsmrf/member-hold.ts):
   * a hold's held there (out of the mix), music on hold played to it alone in place of the room.
   */
  playMusic?(music: string, kind: MusicKind): Promise<PlayResult>;
  /**
   * The music of a hold or music on hold is over for good (neither held nor music on hold any more);
   * absent: nothing beyond stopPlayback. On fsmrf the room's hold of a member ends here (`unhold`):
   * stopPlayback stops only its music (a change of music, a barge-in), the member still held.
   */
  endMusic?(): Promise<void>;
  play(fileOrUrls: PlaySpec | PlaySpec[], opts?: { bargeIn?: boolean }): Promise<PlayResult>;
  say(text: string, opts?: { language?: string; voice?: string; provider?: string; bargeIn?: boolean }): Promise<PlayResult>;
  stopPlayback(): Promise<void>;
  playCollect(opts: PlayCollectOptions): Promise<PlayCollectResult>;

  sendDtmf(digits: string, durationMs?: number, form?: DtmfForm, maxWaiting?: number): Promise<void>;
  /** whether the far end takes RFC 4733 telephone-events */
  readonly telephoneEvent: boolean;
  /** A digit its owner received in signalling (SIP INFO), delivered as the leg's own 'dtmf'. */
  injectDtmf(digit: string, durationMs: number): Promise<void>;

  record(path: string, opts?: RecordOptions): Promise<RecordResult>;
  startRecord(path: string, opts?: RecordOptions): Promise<Recording>;
  stopRecord(path?: string): Promise<void>;

  bridge(other: CallEndpoint): Promise<void>;
  unbridge(): Promise<void>;
  joinConference(conf: Conference, opts?: { mute?: Direction }): Promise<{ memberId: string; confUuid: string }>;
  leaveConference(): Promise<void>;
  mute(direction?: Direction): Promise<void>;
  unmute(direction?: Direction): Promise<void>;
  echo(on?: boolean): Promise<void>;

  // the engine's own taps (the fsmrf backend refuses those it cannot give with MediaBackendUnsupported)
  echoCancel(opts: EchoCancelOptions | null): Promise<void>;
  forkAudioStart(opts: ForkOptions): Promise<MediaFork>;
  forkAudioStop(fork?: MediaFork): Promise<ForkStats | null>;
  amd(opts?: AmdRequest): Promise<AmdResult>;
  stopAmd(): Promise<void>;
  waitForBeep(opts?: { timeoutMs?: number }): Promise<BeepResult>;
  transcribeStart(opts?: TranscribeOptions): Promise<void>;
  transcribeStop(): Promise<void>;
  vadStart(opts?: VadTapOptions): Promise<void>;
  vadStop(): Promise<void>;
  getStats(): Promise<CallEndpointStats>;
  captureRtp(opts: { maxPackets: number; headersOnly: boolean }): Promise<void>;
  takeRtpCapture(): Promise<Uint8Array | null>;

  destroy(): Promise<void>;
}

/**
 * The embedded engine's Endpoint behind `ep`, for what only the engine's own mix takes (its conference's
 * whisper and mute, a worker's host); on another backend, MediaBackendUnsupported naming `feature`.
 */
export function embeddedEndpoint(ep: CallEndpoint, feature: string): Endpoint {
  if (ep instanceof Endpoint) return ep;
  throw new MediaBackendUnsupported('fsmrf', feature);
}

/** ai_talk as a refusal names it. */
export const AI_TALK_FEATURE = 'ai_talk (the AI voice path)';

/** Why `feature` cannot run on `ep`'s backend (it needs the embedded engine's own taps), or null on the engine. */
export function engineOnly(ep: CallEndpoint, feature: string): MediaBackendUnsupported | null {
  return ep instanceof Endpoint ? null : new MediaBackendUnsupported('fsmrf', feature);
}
