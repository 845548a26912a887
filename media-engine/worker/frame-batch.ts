/**
 * Audio crossing between a media worker and the API thread in batches: the frames every fork of a
 * worker is offered in one tick go up as one `forks` message, and what the API thread acknowledges and
 * injects in one turn of its event loop goes down as one `forkAcks` and one `injects` message. A message
 * per frame per fork cost each side a structured clone and a `message` event (200 Twilio streams: 30,000
 * messages a second; the profile put them at a third of the API thread's time per stream, docs/benchmarks.md).
 *
 * Frames are copied into a staging array that grows as needed and is kept; taking the batch copies it
 * once into an array of its own size, which is transferred (never shared): a consumer keeps a view of
 * its frame for as long as it likes. Flushing is the owner's: after the tick (the worker) or in a
 * microtask (the API thread), and before any other message, so that the order of messages holds (an
 * injection queued before a `forkClear` reaches the worker before it).
 */

/** One side's batch of audio: frames or injections, each with its owner's id and a number (its rate). */
export interface FrameBatchOut {
  ids: string[];
  sizes: number[];
  /** per entry: the injection's rate (injects); unused for frames and acks */
  tags: number[];
  samples: Int16Array;
}

export class FrameBatch {
  private ids: string[] = [];
  private sizes: number[] = [];
  private tags: number[] = [];
  private staging: Int16Array;
  private used = 0;

  constructor(initialSamples = 320 * 64) {
    this.staging = new Int16Array(initialSamples);
  }

  get length(): number {
    return this.ids.length;
  }

  /** Copies `samples` in (the caller may reuse its array at once). */
  add(id: string, samples: Int16Array, tag = 0): void {
    const need = this.used + samples.length;
    if (need > this.staging.length) {
      let size = this.staging.length * 2;
      while (size < need) size *= 2;
      const grown = new Int16Array(size);
      grown.set(this.staging.subarray(0, this.used));
      this.staging = grown;
    }
    this.staging.set(samples, this.used);
    this.used = need;
    this.ids.push(id);
    this.sizes.push(samples.length);
    this.tags.push(tag);
  }

  /** The batch (its samples in an array of their own, to transfer), or null when empty; empties it. */
  take(): FrameBatchOut | null {
    if (!this.ids.length) return null;
    const out = { ids: this.ids, sizes: this.sizes, tags: this.tags, samples: this.staging.slice(0, this.used) };
    this.ids = [];
    this.sizes = [];
    this.tags = [];
    this.used = 0;
    return out;
  }
}

/** Counts per id (the API thread's acknowledgements of fork frames), taken as two parallel arrays. */
export class CountBatch {
  private counts = new Map<string, number>();

  get length(): number {
    return this.counts.size;
  }

  add(id: string, n = 1): void {
    this.counts.set(id, (this.counts.get(id) ?? 0) + n);
  }

  take(): { ids: string[]; counts: number[] } | null {
    if (!this.counts.size) return null;
    const ids = [...this.counts.keys()];
    const counts = [...this.counts.values()];
    this.counts.clear();
    return { ids, counts };
  }
}
