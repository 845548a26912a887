// Types for npm `drachtio-fsmrf` (5.0.x), the part the event-socket tests use: Mrf.connect and the
// MediaServer it resolves to (lib/mrf.js, lib/mediaserver.js).
declare module 'drachtio-fsmrf' {
  import { EventEmitter } from 'node:events';

  export interface ConnectOptions {
    address: string;
    port?: number;
    secret?: string;
    listenAddress?: string;
    listenPort?: number;
    advertisedAddress?: string;
    advertisedPort?: number;
    profile?: string;
  }

  /** drachtio-modesl's connection: an EventEmitter2 whose events are `esl::event::<NAME>::<uuid>`. */
  export interface EslConnection extends EventEmitter {
    connected(): boolean;
    /** drachtio-modesl's TCP socket (null once closed) */
    readonly socket?: import('node:net').Socket | null;
    on(event: string, listener: (...args: any[]) => void): this; // eslint-disable-line @typescript-eslint/no-explicit-any -- EventEmitter2 wildcards, untyped
  }

  export interface SipAddresses {
    udp: { address?: string };
    dtls: { address?: string };
  }

  /** An Endpoint (lib/endpoint.js): one channel on the media server, read from its CHANNEL_DATA. */
  export class Endpoint extends EventEmitter {
    readonly uuid: string;
    /** the channel's outbound connection (the switch dialled fsmrf for it); null once it ended */
    readonly conn: EslConnection | null;
    local: { sdp?: string; mediaIp?: string; mediaPort?: string };
    remote: { sdp?: string; mediaIp?: string; mediaPort?: string };
    sip: { callId?: string };
    dtmfType?: string;
    execute(app: string, arg?: string): Promise<unknown>;
    /** a re-INVITE with the far end's new SDP (its dialog's modify) */
    modify(sdp: string): Promise<unknown>;
    destroy(): Promise<void>;
    /** `uuid_audio_fork <uuid> start …` (mod_audio_fork); rejects with the switch's `-ERR …` answer */
    forkAudioStart(opts: {
      wsUrl: string;
      mixType?: 'mono' | 'mixed' | 'stereo';
      sampling?: string;
      bugname?: string;
      metadata?: string | object;
      /** audio back from the server: `enabled` playAudio, `streaming` binary frames, at `sampleRate` (fsmrf sends them as text) */
      bidirectionalAudio?: { enabled?: boolean | string; streaming?: boolean | string; sampleRate?: number | string };
    }): Promise<void>;
    /** `stop [bug] [text]`, `send_text [bug] <text>`, `pause [bug]`, `resume [bug]`: fsmrf's argument shuffles (lib/endpoint.js) */
    forkAudioStop(bugname?: string | object, metadata?: string | object): Promise<void>;
    forkAudioSendText(bugname: string | object, metadata?: string | object): Promise<void>;
    forkAudioPause(bugname?: string | boolean, silence?: boolean): Promise<void>;
    forkAudioResume(bugname?: string): Promise<void>;
    /** subscribes to `CUSTOM <event>`; the handler gets the body (JSON-parsed when it parses) and the event */
    addCustomEventListener(event: string, handler: (body: any, evt: any) => void): void; // eslint-disable-line @typescript-eslint/no-explicit-any -- what the switch sent, untyped
    /** removes `handler` (all of the event's without one); fsmrf keeps the subscription either way (lib/endpoint.js) */
    removeCustomEventListener(event: string, handler?: (body: any, evt: any) => void): void; // eslint-disable-line @typescript-eslint/no-explicit-any -- what the switch sent, untyped
    /** playback: resolves with the playback_* variables of CHANNEL_EXECUTE_COMPLETE; rejects `File Not Found` */
    play(file: string | string[] | PlaybackOptions): Promise<PlaybackResult>;
    /** play_and_get_digits (header values as the switch sent them; null when absent) */
    playCollect(opts: PlayCollectOptions): Promise<PlayCollectResult>;
    record(file: string, opts?: { timeLimitSecs?: number; silenceThresh?: number; silenceHits?: number }): Promise<RecordResult>;
    recordSession(...args: string[]): Promise<unknown>;
    /** speak `<ttsEngine>|<voice>|<text>` */
    speak(opts: { ttsEngine: string; voice: string; text: string }): Promise<unknown>;
    /** set_mute read true / false */
    mute(): Promise<unknown>;
    unmute(): Promise<unknown>;
    /** say `<lang> <sayType> <sayMethod> [<gender>] <text>`: the playback_* variables (null when absent) */
    say(text: string, opts: { sayType: string; sayMethod: string; lang?: string; gender?: string }): Promise<{ playbackSeconds: string | null; playbackMilliseconds: string | null }>;
    /** uuid_bridge with another endpoint or uuid; rejects with the switch's `-ERR …` text */
    bridge(other: Endpoint | string): Promise<void>;
    /** uuid_transfer <uuid> -both park inline */
    unbridge(): Promise<void>;
    /** uuid_dump parsed (`variable_rtp_audio*` and `variable_playback*` as numbers); `true`: uuid_set_media_stats first */
    getChannelVariables(includeMedia?: boolean): Promise<Record<string, string | number>>;
  }

  export interface PlaybackOptions {
    file: string;
    seekOffset?: number;
    timeoutSecs?: number;
  }

  export interface PlaybackResult {
    playbackSeconds: string | null;
    playbackMilliseconds: string | null;
    playbackLastOffsetPos: string | null;
  }

  export interface PlayCollectOptions {
    file: string;
    min?: number;
    max?: number;
    tries?: number;
    timeout?: number;
    terminators?: string;
    invalidFile?: string;
    varName?: string;
    regexp?: string;
    digitTimeout?: number;
  }

  export interface PlayCollectResult {
    digits: string | null;
    invalidDigits: string | null;
    terminatorUsed: string | null;
    playbackSeconds: string | null;
    playbackMilliseconds: string | null;
  }

  export interface RecordResult {
    terminatorUsed: string | null;
    recordSeconds: string | null;
    recordMilliseconds: string | null;
    recordSamples: string | null;
  }

  export class MediaServer extends EventEmitter {
    readonly address: string;
    readonly conn: EslConnection;
    sip: { ipv4: SipAddresses; ipv6: SipAddresses };
    maxSessions: number;
    currentSessions: number;
    cps: number;
    hostname: string | null;
    v4address: string | null;
    v6address: string | null;
    fsVersion: string | null;
    cpuIdle?: number;
    hasCapability(capability: string | string[]): boolean;
    api(command: string): Promise<string>;
    createEndpoint(opts?: { remoteSdp: string | null; codecs?: string | string[]; headers?: Record<string, string> }): Promise<Endpoint>;
    /** an incoming call (drachtio-srf's req/res) connected to a new endpoint: the endpoint and the caller's dialog */
    connectCaller(req: unknown, res: unknown, opts?: { codecs?: string | string[] }): Promise<{ endpoint: Endpoint; dialog: unknown }>;
    connected(): boolean;
    disconnect(): void;
  }

  export default class Mrf extends EventEmitter {
    constructor(srf: unknown, opts?: { customEvents?: string[] });
    connect(opts: ConnectOptions): Promise<MediaServer>;
  }
}
