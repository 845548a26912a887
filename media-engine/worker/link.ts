/**
 * A frame link between two media workers (a MessageChannel): lets a leg on one worker be bridged
 * to a leg, or join a conference, on another. Each tick a side posts one frame; the other side
 * plays the oldest it holds (at most a few are kept, so latency stays one or two ticks).
 */
import type { MessagePort } from 'node:worker_threads';
import type { MixMember } from './mixer';

const MAX_QUEUED = 10;
const PRIME = 3;

export class FrameLink {
  private queue: Int16Array[] = [];
  private primed = false;
  /** what this side sends each tick (a leg's input, or a conference member's N-1 mix) */
  outgoing: () => Int16Array | null = () => null;

  constructor(
    readonly id: string,
    private readonly port: MessagePort,
  ) {
    port.on('message', (f: Int16Array | null) => {
      if (!f) return;
      this.queue.push(f);
      if (this.queue.length > MAX_QUEUED) this.queue.shift();
    });
  }

  /** FrameFeed: the frame for this tick from the other worker. */
  current(): Int16Array | null {
    // the two workers' clocks run at the same rate but their phase wanders: keep one frame in hand
    if (!this.primed) {
      if (this.queue.length < PRIME) return null;
      this.primed = true;
    }
    const f = this.queue.shift() ?? null;
    if (!f) this.primed = false;
    return f;
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
  }
}

/** A conference participant whose leg lives on another worker. */
export class RemoteMember implements MixMember {
  readonly mixOut = new Int16Array(160);
  muteIn = false;
  muteOut = false;
  heardOnlyBy: string | null = null;
  constructor(
    readonly id: string,
    private readonly link: FrameLink,
  ) {
    link.outgoing = () => this.mixOut;
  }
  input(): Int16Array | null {
    return this.link.current();
  }
}
