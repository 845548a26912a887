/**
 * Conference: an N-1 mixer on one media worker, shaped like drachtio-fsmrf's Conference.
 * Events (ConferenceEvents): 'join' and 'leave' ({ memberId, size }), 'speaker' ({ memberId, talking }:
 * a member started or stopped talking, media-engine/dsp/talk.ts), 'destroy' ({ reason }).
 */
import { EventEmitter } from 'node:events';
import { AudioFork, type ForkOptions } from './audio-fork';
import type { Endpoint } from './endpoint';
import type { RecordOptions, RecordResult } from './recorder';
import type { WorkerHost } from './worker/worker-host';
import type { ConferenceEventData, ConferenceEventMessage } from './worker/protocol';

/** Why a conference ended: destroy() was called, or the worker holding its mixer died. */
export type ConferenceEndReason = 'destroyed' | 'worker-died';

export interface ConferenceEvents {
  join: [ConferenceEventData['join']];
  leave: [ConferenceEventData['leave']];
  speaker: [ConferenceEventData['speaker']];
  destroy: [{ reason: ConferenceEndReason }];
}

export class Conference extends EventEmitter<ConferenceEvents> {
  destroyed = false;
  private recording: Promise<RecordResult> | null = null;
  private readonly forks = new Set<AudioFork>();

  constructor(
    readonly uuid: string,
    readonly name: string,
    readonly host: WorkerHost,
    private readonly onDestroy: (c: Conference) => void,
  ) {
    super();
  }

  /** Adds an endpoint (same as endpoint.joinConference(conf, opts)). */
  join(ep: Endpoint, opts: { mute?: 'in' | 'out' | 'both' } = {}) {
    return ep.joinConference(this, opts);
  }

  leave(ep: Endpoint): Promise<void> {
    return ep.leaveConference();
  }

  /** Per participant: 'in' = others don't hear them, 'out' = they hear nothing. */
  mute(ep: Endpoint, direction: 'in' | 'out' | 'both' = 'in'): Promise<void> {
    return this.host.call('muteMember', this.uuid, ep.uuid, direction, true);
  }

  unmute(ep: Endpoint, direction: 'in' | 'out' | 'both' = 'in'): Promise<void> {
    return this.host.call('muteMember', this.uuid, ep.uuid, direction, false);
  }

  /** Only `to` hears `ep` (a whisper: docs/pbx.md "Supervisor"); null: every member hears it again. */
  whisper(ep: Endpoint, to: Endpoint | null): Promise<void> {
    return this.host.call('whisperMember', this.uuid, ep.uuid, to?.uuid ?? null);
  }

  /** The members that do not hear `ep` (mod_conference's relate nospeak/nohear: esl/conference/relate.ts); empty: all do again. */
  notHeardBy(ep: Endpoint, listeners: Endpoint[]): Promise<void> {
    return this.host.call(
      'relateMember',
      this.uuid,
      ep.uuid,
      listeners.map((l) => l.uuid),
    );
  }

  members(): Promise<string[]> {
    return this.host.call('conferenceMembers', this.uuid);
  }

  /** Records the whole mix; the promise resolves when stopRecording() or destroy() ends it. */
  startRecording(path: string, opts: Pick<RecordOptions, 'duration'> = {}): Promise<RecordResult> {
    this.recording = this.host.call('recordConference', this.uuid, path, opts);
    return this.recording;
  }

  async stopRecording(): Promise<RecordResult | null> {
    await this.host.call('stopConferenceRecord', this.uuid);
    return this.recording;
  }

  /** Raw frames of the whole mix; injected audio is heard by every participant. */
  async forkAudioStart(opts: Omit<ForkOptions, 'mix'>): Promise<AudioFork> {
    if (this.destroyed) throw new Error('conference is destroyed');
    const f = await new AudioFork(this.host, this.uuid, opts).start();
    this.forks.add(f);
    return f;
  }

  private stopForks(): void {
    // the worker dropped its side of the forks with the mixer: drop ours so no sink lingers
    for (const f of this.forks) f.stop().catch(() => {});
    this.forks.clear();
  }

  /** @internal an event of the mixer, from its worker (its 'destroy' is ours to emit) */
  deliver(m: ConferenceEventMessage): void {
    if (this.destroyed) return;
    if (m.name === 'join') this.emit('join', m.data);
    else if (m.name === 'leave') this.emit('leave', m.data);
    else if (m.name === 'speaker') this.emit('speaker', m.data);
  }

  /** @internal the worker holding the mixer is gone */
  markDestroyed(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.stopForks();
    this.onDestroy(this);
    this.emit('destroy', { reason: 'worker-died' });
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    this.stopForks();
    await this.host.call('destroyConference', this.uuid).catch(() => {});
    this.onDestroy(this);
    this.emit('destroy', { reason: 'destroyed' });
  }
}
