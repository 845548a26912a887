/**
 * The seam between the flow runner and the call/media plane. The runner never touches SIP or RTP:
 * everything it does to a call goes through a CallPort. The live implementation (drachtio-srf dialog
 * + media-engine endpoint) and the simulator's virtual call both implement it.
 *
 * Media methods resolve when the media is done and must stop early, resolving or rejecting, when
 * `signal` aborts (stop, hangup); the runner treats both alike.
 */
import type { Address as SpecAddress } from '../../core/address';
import type { HoldMusicOption } from '../../core/flow/options/common';

/** An address as a flow action's option gives it (core/address.ts with every field optional): the dialler refuses what it cannot dial. */
export type Address = Partial<SpecAddress>;

/** Call statuses (reference schema CallManagerCallStatus). */
export type CallStatus = 'dialing' | 'ringing' | 'progressing' | 'terminating' | 'canceling' | 'hangup';

export interface CallInfo {
  id: string;
  direction: 'incoming' | 'outgoing';
  status: CallStatus;
  master_call_id: string;
  source: Address;
  destination: Address;
}

export interface DigitsRequest {
  /** Milliseconds to wait; <= 0 waits until length, key or hangup. */
  duration: number;
  /** Done when this many digits are held (0: not used). */
  length: number;
  /** Any of these characters ends the collection (it is kept in the digits). */
  key: string;
  /** Digits already held (pressed during an earlier prompt): collection continues from them. */
  carryover: string;
}

export interface DigitsResult {
  digits: string;
  reason: 'length' | 'key' | 'timeout';
}

export interface RecordingRequest {
  format: 'wav';
  /** Seconds of silence that end the recording (0: off). */
  end_of_silence: number;
  /** '', 'none', 'any' or one DTMF key that ends the recording. */
  end_of_key: string;
  /** Maximum seconds (0: no cap). */
  duration: number;
  beep_start: boolean;
  /** Kept in the recording's options: its `source` in the Twilio view (core/conferences/twilio-recording.ts twilioSourceOf). */
  twilio_source?: string;
}

export type AmdResult = 'human' | 'machine' | 'notsure';

export interface ConnectRequest {
  source?: Address;
  destinations: Address[];
  early_media: boolean;
  relay_reason: boolean;
  anonymous: 'yes' | 'no' | 'auto';
  /** Ms the destinations ring before they are given up; unset: the node's dial timeout. */
  ring_timeout?: number;
  /** Ms the bridge may last after the answer; then the destination is hung up. Unset: no limit. */
  duration_limit?: number;
  /** Record the call from the answer until the bridge ends. */
  record?: boolean;
  /** A * from the caller ends the bridge (the destination is hung up). */
  hangup_on_star?: boolean;
  /** What a held side of the bridge hears (media-app/call/hold-music.ts); unset: as 'default'. */
  hold_music?: HoldMusicOption;
}

export interface ConnectResult {
  /** True when a destination answered and was bridged. */
  answered: boolean;
  /** Hangup reason of the destination leg (relay_reason). */
  hangup_reason: string;
  /** Which side left the bridge first. */
  ended_by: 'destination' | 'master';
  /** Ms the bridge lasted (from the answer), when one was opened and this side measured it. */
  bridged_ms?: number;
  /** The recording made of the bridge (record). */
  recording_id?: string;
  /** The destination leg: the one bridged, else the first dialled (Twilio's DialCallSid). */
  leg_id?: string;
  /** That leg's INVITE on the wire: its Call-ID and final SIP status (200 answered), when it went out. */
  sip_call_id?: string;
  sip_status?: number;
}

export interface OriginateRequest {
  source?: Address;
  destinations: Address[];
  /** Flow for the new call(s): flow_id, or inline actions when flow_id is unset. */
  flow_id: string;
  actions: unknown[];
  chained: boolean;
  early_execution: boolean;
  anonymous: 'yes' | 'no' | 'auto';
  /** The call this one is chained to (empty UUID when none). */
  master_call_id: string;
  /** Activeflow that asked, for the record. */
  activeflow_id: string;
}

/** A recording's end: `digits` is the key that ended it, or `hangup` when the call ended it (Twilio's Digits). */
export interface RecordingEnded {
  recording_id: string;
  digits?: string;
}

/** Creates independent calls; a CallPort is one, but an activeflow without a call can have one too. */
export interface Originator {
  originate(req: OriginateRequest): Promise<{ call_ids: string[] }>;
}

export interface HangupInfo {
  reason: string;
  by: 'local' | 'remote';
}

export interface CallPort extends Originator {
  /** Current snapshot of the call. */
  readonly info: CallInfo;

  answer(signal: AbortSignal): Promise<void>;
  /**
   * Makes the call ready for media driven outside the port (ai_talk, queues: a service uses the
   * call's endpoint): not ending, answered (waits for an outgoing call's answer), with media.
   * Rejects when one cannot hold. The port's own media methods ensure their preconditions themselves.
   */
  prepareMedia(signal: AbortSignal): Promise<void>;
  talk(req: { text: string; language: string; provider?: string; voice_id?: string }, signal: AbortSignal): Promise<void>;
  play(urls: string[], signal: AbortSignal): Promise<void>;
  beep(signal: AbortSignal): Promise<void>;
  collectDigits(req: DigitsRequest, signal: AbortSignal): Promise<DigitsResult>;
  sendDigits(req: { digits: string; duration: number; interval: number }, signal: AbortSignal): Promise<void>;
  recordingStart(req: RecordingRequest): Promise<{ recording_id: string }>;
  recordingStop(): Promise<void>;
  amd(signal: AbortSignal): Promise<{ result: AmdResult }>;
  /** Echo (stream: false) or stream echo (stream: true, DTMF still received) for duration ms. */
  echo(req: { duration: number; stream: boolean }, signal: AbortSignal): Promise<void>;
  hangup(reason: string): Promise<void>;
  mute(direction: 'both' | 'in' | 'out'): Promise<void>;
  /** An AI agent's reply silenced at the party (or heard again): a mute of its own beside the call's. */
  duck(on: boolean): Promise<void>;
  /** Dials the destinations, bridges the first to answer, resolves when the bridge ends. */
  connect(req: ConnectRequest, signal: AbortSignal): Promise<ConnectResult>;
  /** How a recording of this call ended, once it has (this node's recordings); undefined before. */
  recordingEnded(recordingId: string): RecordingEnded | undefined;
  /** Hangup reason of another call (hangup with reference_id); undefined when unknown. */
  hangupReasonOf(callId: string): Promise<string | undefined>;

  on(event: 'dtmf', listener: (digit: string) => void): this;
  on(event: 'hangup', listener: (info: HangupInfo) => void): this;
  on(event: 'status', listener: (status: CallStatus) => void): this;
  on(event: 'recording_ended', listener: (ev: RecordingEnded) => void): this;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- EventEmitter's own off() signature, which implementations inherit
  off(event: 'dtmf' | 'hangup' | 'status' | 'recording_ended', listener: (...args: any[]) => void): this;
}
