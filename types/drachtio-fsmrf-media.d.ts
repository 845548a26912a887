// Types for npm `drachtio-fsmrf` (5.0.x), the Endpoint's media calls beyond drachtio-fsmrf.d.ts
// (lib/endpoint.js): dub (uuid_dub) (modify and forkAudioStart are in drachtio-fsmrf.d.ts);
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
    dub(opts: DubOptions): Promise<void>;
  }
}
