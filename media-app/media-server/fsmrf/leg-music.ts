/**
 * Where a leg's music plays (a hold's music, music on hold: media-app/call/media-state.ts's loop, through
 * the endpoint's playMusic / stopPlayback / endMusic), one owner at a time (README.md beside,
 * "Conferences"): the leg's own playback, or, while the leg is a member of a switch room, the room's hold
 * of that member (member-hold.ts: the member's own play would wait behind its `conference` application).
 * The room makes the hold, lends it to the leg when the member enters and takes it back when the member
 * leaves, goes or the room ends (FsmrfMix); the leg only asks through MusicPort and never makes, keeps
 * or closes the room's hold. A room takes back only what it lent: another room's port stays.
 */
import type { PlayResult } from '../../../media-engine';
import type { MusicKind } from '../endpoint';
import type { MediaBackendUnsupported } from '../port';

/** What the leg asks of whatever plays its music. */
export interface MusicPort {
  /** Plays `music` once as `kind` says (the loop asks again): resolves at its end, `interrupted` when stopped or not played. */
  play(music: string, kind: MusicKind): Promise<PlayResult>;
  /** The music stops; a hold stays (a change of music, a barge-in, a flow's abort). */
  stop(): Promise<void>;
  /** The music is over for good (the party neither held nor on music on hold any more): a room's hold ends. */
  end(): Promise<void>;
  /** Why the music would not be played now, or null. */
  refusal(): MediaBackendUnsupported | null;
}

/** What a play that did not happen reports. */
export const NOT_PLAYED: PlayResult = { playbackSeconds: 0, playbackMilliseconds: 0, playbackLastOffsetPos: 0, interrupted: true };

/** A leg's music: its own port, or the one a room lent it until that room takes it back. */
export class LegMusic {
  private lent: { owner: object; port: MusicPort } | null = null;

  constructor(private readonly own: MusicPort) {}

  /** The port the leg's music goes through now. */
  get port(): MusicPort {
    return this.lent?.port ?? this.own;
  }

  /** `owner` (a room) plays the leg's music through `port` from now on, in place of any earlier lender's. */
  lend(owner: object, port: MusicPort): void {
    this.lent = { owner, port };
  }

  /** `owner` takes its port back: the leg's own again. A port lent by another owner stays. */
  takeBack(owner: object): void {
    if (this.lent?.owner === owner) this.lent = null;
  }
}
