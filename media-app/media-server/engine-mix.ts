/**
 * The embedded engine's Conference as a ConferenceMix (conference.ts): members join and leave
 * through their endpoints as before, mute is the engine mixer's per-member mute, the recording is
 * the engine's WAV of the whole mix. Its events are the Conference's.
 */
import { EventEmitter } from 'node:events';
import type { Conference } from '../../media-engine';
import type { AnnounceTarget, ConferenceMix, MixDirection, MixEvents } from './conference';
import { embeddedEndpoint, type CallEndpoint } from './endpoint';

/** The join/leave beep: 300 ms of 1 kHz at 8 kHz, a quarter of full scale, faded in and out over 5 ms. */
const BEEP_MS = 300;
const BEEP = Int16Array.from({ length: (8000 * BEEP_MS) / 1000 }, (_, i, n = (8000 * BEEP_MS) / 1000) =>
  Math.round(8000 * Math.min(1, i / 40, (n - 1 - i) / 40) * Math.sin((2 * Math.PI * 1000 * i) / 8000)),
);

export class EngineMix extends EventEmitter<MixEvents> implements ConferenceMix {
  constructor(readonly engine: Conference) {
    super();
    engine.on('speaker', (e) => this.emit('speaker', e));
    engine.on('destroy', (e) => this.emit('destroy', e));
  }

  get name(): string {
    return this.engine.name;
  }

  get destroyed(): boolean {
    return this.engine.destroyed;
  }

  async join(ep: CallEndpoint, opts: { mute?: MixDirection } = {}): Promise<void> {
    await ep.joinConference(this.engine, opts);
  }

  leave(ep: CallEndpoint): Promise<void> {
    return ep.leaveConference();
  }

  mute(ep: CallEndpoint, direction: MixDirection, on: boolean): Promise<void> {
    const mixed = embeddedEndpoint(ep, 'a conference mute');
    return on ? this.engine.mute(mixed, direction) : this.engine.unmute(mixed, direction);
  }

  /** The engine mixer's whisper. */
  coach(ep: CallEndpoint, to: CallEndpoint | null): Promise<void> {
    return this.engine.whisper(embeddedEndpoint(ep, 'conference coaching'), to ? embeddedEndpoint(to, 'conference coaching') : null);
  }

  startRecording(path: string, opts: { duration?: number } = {}): Promise<unknown> {
    return this.engine.startRecording(path, opts);
  }

  async stopRecording(): Promise<void> {
    await this.engine.stopRecording();
  }

  /** The member's endpoint plays the announcement: it hears it in place of the room meanwhile. */
  announceTo(ep: CallEndpoint): AnnounceTarget {
    return ep;
  }

  /** The beep injected into the mix through an audio fork of the mixer, stopped once the tone has played. */
  async beep(): Promise<void> {
    const fork = await this.engine.forkAudioStart({ onFrame: () => undefined });
    fork.inject(BEEP);
    // the fork ends once the tone has played (its unplayed audio would go with it)
    setTimeout(() => void fork.stop().catch(() => undefined), BEEP_MS + 300).unref();
  }

  destroy(): Promise<void> {
    return this.engine.destroy();
  }
}
