/**
 * A conference's forks (docs: media-engine/README.md "The wideband path"): what each one is offered
 * of the room's mix, and the member through which its injected audio joins the mix.
 *
 * A fork's rate is fixed when it starts: 16000 for a fork asked with `legRate` while the room mixes at
 * 16 kHz (a wideband member is in it), else 8000. A 16 kHz fork gets the 16 kHz mix, or the 8 kHz one
 * resampled up by the fork while the room has no wideband member left; an 8 kHz fork the 8 kHz mix.
 */
import type { ForkTap } from '../fork';
import type { Recorder } from '../recorder';
import type { ConferenceMixer, MixMember } from './mixer';

/** A conference of the worker: its mixer, its recording and its forks. */
export interface ConferenceState {
  mixer: ConferenceMixer;
  recorder: Recorder | null;
  forks: Map<string, ForkTap>;
}

/** One tick of a conference: mixed, recorded, offered to its forks. */
export function serveConference(c: ConferenceState): void {
  c.mixer.tick();
  const r = c.recorder;
  if (r) {
    // a 16 kHz recording takes the 16 kHz mix, or the 8 kHz one resampled up while the room is narrowband
    if (r.rate === 8000) r.write(c.mixer.mix, null);
    else if (c.mixer.wide && c.mixer.mixWide) r.write(c.mixer.mixWide, null);
    else r.writeNarrow(c.mixer.mix, null);
    if (r.finished) c.recorder = null;
  }
  offerMix(c.forks, c.mixer);
}

/** Offers this tick's mix to each fork of the room at the fork's rate. */
export function offerMix(forks: Map<string, ForkTap>, mixer: ConferenceMixer): void {
  if (!forks.size) return;
  for (const f of forks.values()) {
    if (f.rate === 8000) f.offer(mixer.mix);
    else if (mixer.wide && mixer.mixWide) f.offer(mixer.mixWide);
    else f.offerNarrow(mixer.mix);
  }
}

/**
 * Audio a fork injects into a conference: a participant that hears nothing. While its next frame is
 * 16 kHz (`inject(samples, 16000)`) it is a wideband member, so the room mixes that frame at 16 kHz
 * (wideband members hear it whole; G.711 members get it in the 8 kHz mix, brought down by the fork).
 * The mixer asks `input()` first in a tick, then `inputWide()`: one frame is taken per tick.
 */
export class InjectMember implements MixMember {
  readonly id: string;
  readonly mixOut = new Int16Array(160);
  readonly mixOutWide = new Int16Array(320);
  mixedWide = false;
  muteIn = false;
  muteOut = true;
  heardOnlyBy: string | null = null;
  /** this tick's frame: at 16 kHz when it came so, else at 8 kHz */
  private wideFrame: Int16Array | null = null;
  private narrowFrame: Int16Array | null = null;

  constructor(private readonly tap: ForkTap) {
    this.id = `fork:${tap.id}`;
  }

  /** Asked before `input()` (is the room wideband this tick) and after it: this tick's frame or the next is 16 kHz. */
  get wideband(): boolean {
    return this.wideFrame !== null || this.tap.nextInjectedRate === 16000;
  }

  input(): Int16Array | null {
    if (this.tap.nextInjectedRate !== 16000) {
      this.wideFrame = null;
      return (this.narrowFrame = this.tap.nextInjected());
    }
    this.narrowFrame = null;
    this.wideFrame = this.tap.nextInjectedAt(16000);
    return this.wideFrame && this.tap.narrowOf(this.wideFrame);
  }

  /** This tick's frame at 16 kHz (an 8 kHz one brought up by the fork, where the rate changes). */
  inputWide(): Int16Array | null {
    return this.wideFrame ?? (this.narrowFrame && this.tap.wideOf(this.narrowFrame));
  }
}
