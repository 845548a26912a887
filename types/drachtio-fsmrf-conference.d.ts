// Types for npm `drachtio-fsmrf` (5.0.x), its conferences (lib/conference.js, Endpoint's join and conf*
// member operations in lib/endpoint.js, MediaServer.createConference): merged into the declarations of
// drachtio-fsmrf.d.ts, for test/esl/conference.test.ts.
declare module 'drachtio-fsmrf' {
  import { EventEmitter } from 'node:events';

  /** A modesl event as fsmrf hands it on. */
  export interface EslEvent {
    getHeader(name: string): string | undefined;
    getBody(): string;
  }

  export interface ConfJoinOptions {
    pin?: string;
    profile?: string;
    flags?: { mute?: boolean; deaf?: boolean; moderator?: boolean; endconf?: boolean; nomoh?: boolean; ghost?: boolean; joinOnly?: boolean; vmute?: boolean };
  }

  export interface Endpoint {
    /** the conference this endpoint joined (set by join) */
    conf: { memberId?: number; name?: string; uuid?: string };
    /** `conference <name>[@profile][+pin][+flags{…}]`: resolves at the member's add-member */
    join(conf: string | Conference, opts?: ConfJoinOptions): Promise<{ memberId: number; confUuid: string }>;
    /** `api <command> <args>` on the endpoint's connection: the api/response event */
    api(command: string, args?: string | string[]): Promise<EslEvent>;
    confMute(args?: string): Promise<string>;
    confUnmute(args?: string): Promise<string>;
    confDeaf(args?: string): Promise<string>;
    confUndeaf(args?: string): Promise<string>;
    confKick(args?: string): Promise<string>;
    confHup(args?: string): Promise<EslEvent>;
    confPlay(file: string): Promise<EslEvent>;
  }

  export class Conference extends EventEmitter {
    readonly name: string;
    readonly uuid: string;
    readonly endpoint: Endpoint;
    readonly memberId: number;
    readonly participants: Map<number, { memberId: number; type: string; channelUuid: string }>;
    destroy(): Promise<void>;
    getSize(): Promise<number>;
    list(args?: string): Promise<EslEvent>;
    mute(args?: string): Promise<string>;
    unmute(args?: string): Promise<string>;
    deaf(args?: string): Promise<string>;
    undeaf(args?: string): Promise<string>;
    lock(): Promise<string>;
    unlock(): Promise<string>;
    get(param: string): Promise<string | number>;
    set(param: string, value: string): Promise<string>;
    /** resolves at the play-file-done of the (last) file */
    play(file: string | string[]): Promise<{ seconds: number; milliseconds: number; samples: number }>;
    startRecording(file: string): Promise<string>;
    stopRecording(file: string): Promise<string>;
    pauseRecording(file: string): Promise<string>;
    resumeRecording(file: string): Promise<string>;
  }

  export interface MediaServer {
    createConference(name?: string, opts?: { maxMembers?: number }): Promise<Conference>;
  }
}
