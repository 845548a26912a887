/**
 * The shapes an Endpoint (endpoint.ts) hands out: why it ended, its events, play-and-collect's options
 * and result, and its RTP figures.
 */
import type { PlayResult } from './player';
import type { RecordResult } from './recorder';
import type { DtmfEvent } from './worker/leg';
import type { SpeechEvent } from './worker/leg-analysis';
import type { RtcpReceived, RtpCounters } from './worker/rtp-counters';
import type { Transcript } from './transcriber';
import type { RxTimeoutEvent } from './worker/rx-watch';

/**
 * Why an endpoint ended: 'destroyed' (destroy() was called, also by MediaServer.destroy()), or
 * 'worker-died' (the media worker holding it crashed or was stopped; its port is free again).
 */
export type EndpointEndReason = 'destroyed' | 'worker-died';

export interface EndpointEnd {
  reason: EndpointEndReason;
  /** what happened, for logs (the worker's error on 'worker-died') */
  message?: string;
}

export interface EndpointEvents {
  /** a digit (RFC 4733 or in-band, or one its owner received in signalling: receivedDtmf) */
  dtmf: [DtmfEvent];
  /** a digit the endpoint bridged to this one received: this endpoint's owner sends it on (relay) */
  peerDtmf: [DtmfEvent];
  /** the VAD tap (vadStart): a turn of the caller's speech started or stopped */
  speech: [SpeechEvent];
  /** a segment of real-time transcription (transcribeStart) */
  transcript: [Transcript];
  transcriptionError: [Error];
  /** the receive watch (watchRx): the far end sent no RTP or RTCP for its timeout */
  rxTimeout: [RxTimeoutEvent];
  /** the endpoint is gone, once, with the reason */
  destroy: [EndpointEnd];
}

/** A recording whose recorder is armed (Endpoint.startRecord): every frame the leg plays from its next tick on is in the file. */
export interface Recording {
  path: string;
  /** samples per second of the file (the leg's rate as it started: 8000, or 16000 on a wideband leg) */
  rate: number;
  /** settles as record()'s promise does: when the recording stops (or fails) */
  done: Promise<RecordResult>;
}

export interface PlayCollectOptions {
  file?: string | string[];
  /** speak this text instead of (or after) the file */
  say?: { text: string; language?: string; voice?: string };
  min?: number;
  max?: number;
  tries?: number;
  /** ms to wait for the first digit after the prompt ends */
  timeout?: number;
  /** ms allowed between digits */
  digitTimeout?: number;
  terminators?: string;
  invalidFile?: string;
  regexp?: string | RegExp;
}

export interface PlayCollectResult extends Partial<PlayResult> {
  digits: string;
  terminatorUsed: string | null;
}

/** The leg's RTP counters (rtp-counters.ts) and its jitter buffer, codec and RTCP. */
export interface EndpointStats extends RtpCounters {
  jitterTargetFrames: number;
  /** the jitter buffer's nominal playout delay (its target), ms */
  jitterBufferMs: number;
  /**
   * Frames from the playout point to the end of the newest packet received, now (a gap counted): the
   * buffer's real depth, which the target only sets at a start or a change (a stream that starts while the worker catches up after a stall plays a frame
   * nearer its packets). Its mean over time, times 20 ms, is the mean time a frame waits (Little's law).
   */
  jitterDepthFrames: number;
  /** the negotiated codec (PCMU, PCMA, G722, opus) and its packet time; null before media is negotiated */
  codec: string | null;
  ptimeMs: number;
  /** RTCP SR/RR received from the far end */
  rtcp: RtcpReceived;
}
