// Types for npm `drachtio-fsmrf` (5.0.x), the Endpoint's media calls beyond drachtio-fsmrf.d.ts
// (lib/endpoint.js): modify (a re-INVITE), dub (uuid_dub) and forkAudioStart's bidirectional audio;
// merged into those declarations, for scripts/fsmrf/ and test/esl/.
declare module 'drachtio-fsmrf' {
  export interface DubOptions {
    action: 'addTrack' | 'removeTrack' | 'silenceTrack' | 'playOnTrack' | 'sayOnTrack';
    track: string;
    play?: string;
    say?: string;
    loop?: boolean;
    gain?: number | string;
  }

  export interface Endpoint {
    /** re-INVITE with `sdp`; then reads the channel's media variables back (uuid_dump) */
    modify(sdp: string): Promise<unknown>;
    dub(opts: DubOptions): Promise<void>;
    forkAudioStart(opts: {
      wsUrl: string;
      mixType?: 'mono' | 'mixed' | 'stereo';
      sampling?: string;
      bugname?: string;
      metadata?: string | object;
      bidirectionalAudio?: { enabled?: boolean | string; streaming?: boolean | string; sampleRate?: number | string };
    }): Promise<void>;
  }
}
