/**
 * A frame link between two media workers (a MessageChannel): lets a leg on one worker be bridged
 * to a leg, or join a conference, on another. Each tick a side posts one frame; the other side
 * plays the oldest it holds (at most a few are kept, so latency stays one or two ticks).
 *
 * Rates: a side posts 20 ms at its own rate: 16 kHz (320 samples) from a wideband leg or a wideband
 * member's 16 kHz conference mix, else 8 kHz (160). The receiver takes one frame per tick
 * (`advance`) and offers it both ways: `currentWide()` gives a 16 kHz frame as it came (null for an
 * 8 kHz one: a wideband leg resamples that up itself), `current()` gives 8 kHz, a 16 kHz frame
 * resampled down (one speexdsp resampler per link, made for the first 16 kHz frame). So two
 * wideband legs bridged across workers keep their band, as on one worker.
 */
import type { MessagePort } from 'node:worker_threads';
import { Resampler } from '../codecs';
import type { MixMember } from './mixer';

const MAX_QUEUED = 10;
const PRIME = 3;
const FRAME = 160;
const WIDE = 320;

export class FrameLink {
  private queue: Int16Array[] = [];
  private primed = false;
  /** this tick's frame from the other worker (set by advance) */
  private frame: Int16Array | null = null;
  private readonly narrow = new Int16Array(FRAME);
  private narrowDone = false;
  private down: Resampler | null = null;
  /** whether the other side last sent 16 kHz frames (kept across silent ticks) */
  peerWide = false;
  /** what this side sends each tick (a leg's input, or a conference member's N-1 mix), at 8 or 16 kHz */
  outgoing: () => Int16Array | null = () => null;

  constructor(
    readonly id: string,
    private readonly port: MessagePort,
  ) {
    port.on('message', (f: Int16Array | null) => {
      if (!f || (f.length !== FRAME && f.length !== WIDE)) return;
      this.queue.push(f);
      if (this.queue.length > MAX_QUEUED) this.queue.shift();
    });
  }

  /** Takes this tick's frame from the queue (once per tick, before anyone reads it). */
  advance(): void {
    this.narrowDone = false;
    // the two workers' clocks run at the same rate but their phase wanders: keep one frame in hand
    if (!this.primed) {
      if (this.queue.length < PRIME) {
        this.frame = null;
        return;
      }
      this.primed = true;
    }
    const f = this.queue.shift() ?? null;
    if (!f) this.primed = false;
    else this.peerWide = f.length === WIDE;
    this.frame = f;
  }

  /** FrameFeed: this tick's frame from the other worker at 8 kHz. */
  current(): Int16Array | null {
    const f = this.frame;
    if (!f || f.length === FRAME) return f;
    if (!this.narrowDone) {
      (this.down ??= new Resampler(16000, 8000)).process(f, this.narrow, WIDE);
      this.narrowDone = true;
    }
    return this.narrow;
  }

  /** FrameFeed: this tick's frame at 16 kHz when the other side sent one, else null. */
  currentWide(): Int16Array | null {
    const f = this.frame;
    return f && f.length === WIDE ? f : null;
  }

  flush(): void {
    const f = this.outgoing();
    if (f) {
      const copy = f.slice();
      this.port.postMessage(copy, [copy.buffer as ArrayBuffer]);
    }
  }

  close(): void {
    this.port.close();
    this.queue = [];
    this.frame = null;
    this.down?.close();
    this.down = null;
  }
}

/** A conference participant whose leg lives on another worker; wideband while that leg sends 16 kHz. */
export class RemoteMember implements MixMember {
  readonly mixOut = new Int16Array(FRAME);
  readonly mixOutWide = new Int16Array(WIDE);
  mixedWide = false;
  muteIn = false;
  muteOut = false;
  heardOnlyBy: string | null = null;
  notHeardBy: ReadonlySet<string> | null = null;
  constructor(
    readonly id: string,
    private readonly link: FrameLink,
  ) {
    link.outgoing = () => (this.mixedWide ? this.mixOutWide : this.mixOut);
  }
  get wideband(): boolean {
    return this.link.peerWide;
  }
  input(): Int16Array | null {
    return this.link.current();
  }
  inputWide(): Int16Array | null {
    return this.link.currentWide();
  }
}
