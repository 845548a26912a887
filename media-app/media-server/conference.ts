/**
 * A conference room's mix as media-app's conferences use it (README.md beside, "Conferences"): the
 * seam between media-app/conference/ and the media server that mixes. The embedded engine's
 * Conference serves it through EngineMix (engine-mix.ts); the fsmrf backend through the switch's own
 * conference (fsmrf/conference.ts: fsmrf's Conference, `conference <name> …`). What only the engine's
 * mixer can do (whisper/coaching, raw frames of the mix) is reached through
 * `engineMix`, which refuses it by name with MediaBackendUnsupported on another backend.
 */
import type { EventEmitter } from 'node:events';
import type { Conference } from '../../media-engine';
import type { CallEndpoint } from './endpoint';
import { MediaBackendUnsupported, type MediaPort } from './port';
import { EngineMix } from './engine-mix';

export type MixDirection = 'in' | 'out' | 'both';

/** What a mix reports (event name → listener arguments). */
export interface MixEvents {
  /** a member started or stopped talking; `memberId` is its endpoint's uuid */
  speaker: [{ memberId: string; talking: boolean }];
  /** the mix is gone: destroy() ('destroyed') or the media server lost it ('worker-died') */
  destroy: [{ reason: 'destroyed' | 'worker-died' }];
  /**
   * the media server let a member go by itself: `memberId` its endpoint's uuid; `hungUp` when its channel
   * was down as it left (FreeSWITCH's del-member Answer-State "hangup"), else a kick from elsewhere
   */
  memberLeft: [{ memberId: string; hungUp: boolean }];
  /** a member entered (its join resolved) but may hear a coach coaching another (fsmrf: a relate failed); `memberId` its endpoint's uuid */
  coachingFailed: [{ memberId: string; err: Error }];
}

/** Where an AnnounceUrl's steps play to one member (media-app/conference/announce.ts). */
export interface AnnounceTarget {
  readonly destroyed: boolean;
  play(urls: string[]): Promise<unknown>;
  say(text: string, opts: { language?: string; voice?: string; provider?: string }): Promise<unknown>;
}

export interface ConferenceMix extends EventEmitter<MixEvents> {
  /** the name the media server knows the room by */
  readonly name: string;
  readonly destroyed: boolean;
  /** the embedded engine's Conference behind this mix; null on another backend */
  readonly engine: Conference | null;
  /** The leg's endpoint hears the room and is heard (N-1); `mute` as it enters. */
  join(ep: CallEndpoint, opts?: { mute?: MixDirection }): Promise<void>;
  /** The leg leaves the mix (a kick, a hangup, the room ending); its call goes on. Idempotent. */
  leave(ep: CallEndpoint): Promise<void>;
  /** `in`: the others do not hear the member; `out`: it hears nothing; `on` false undoes it. */
  mute(ep: CallEndpoint, direction: MixDirection, on: boolean): Promise<void>;
  /** Coaching: `ep` is heard by `to` only and hears everyone; null: heard by every member again. */
  coach(ep: CallEndpoint, to: CallEndpoint | null): Promise<void>;
  /** Records the whole mix into `path` (a WAV); resolves when stopRecording(), `duration` (s) or the end of the room ends it. */
  startRecording(path: string, opts?: { duration?: number }): Promise<unknown>;
  /** Stops the recording (none running: nothing). */
  stopRecording(): Promise<void>;
  /** Where an announcement plays to the member of `ep`: its endpoint on the engine (heard in place of the room), the room itself on the switch. */
  announceTo(ep: CallEndpoint): AnnounceTarget;
  /** A short tone every member hears (TwiML beep: 300 ms of 1 kHz); rejects when it cannot be played. */
  beep(): Promise<void>;
  /** Ends the room: every member is out, its recording closed. */
  destroy(): Promise<void>;
}

/** A media port whose backend has a conference mix of its own (the fsmrf backend). */
export interface MixPort {
  createMix(name: string): Promise<ConferenceMix>;
}

/** Whether `media` mixes rooms itself (the fsmrf backend: the switch's conference), not in the engine's Conference. */
export const hasOwnMix = (media: MediaPort): media is MediaPort & MixPort => typeof (media as Partial<MixPort>).createMix === 'function';

/** A room's mix on `media`: the backend's own, else the embedded engine's Conference (EngineMix). */
export async function openMix(media: MediaPort, name: string): Promise<ConferenceMix> {
  if (hasOwnMix(media)) return media.createMix(name);
  return new EngineMix(await media.createConference(name));
}

/** The engine's Conference behind `mix`, for what only its mixer does; on another backend MediaBackendUnsupported naming `feature`. */
export function engineMix(mix: ConferenceMix, feature: string): Conference {
  if (mix.engine) return mix.engine;
  throw new MediaBackendUnsupported('fsmrf', feature);
}
