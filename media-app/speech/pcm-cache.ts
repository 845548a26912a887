/**
 * Speech already synthesized on this node, kept in memory as 8 kHz samples: a text a session says
 * again (a bot's "one moment please") goes out at once, without a synthesis. Least recently used
 * entries go first once the cache holds more than its budget.
 */
export class PcmCache {
  private readonly map = new Map<string, Int16Array>();
  private bytes = 0;
  hits = 0;

  constructor(
    private readonly maxBytes = 16 * 1024 * 1024,
    private readonly maxEntryBytes = 1024 * 1024,
  ) {}

  static key(parts: Array<string | number | boolean>): string {
    return JSON.stringify(parts);
  }

  get(key: string): Int16Array | undefined {
    const v = this.map.get(key);
    if (!v) return undefined;
    this.map.delete(key);
    this.map.set(key, v);
    this.hits++;
    return v;
  }

  /** Stores the samples of one whole text (too long a text is not kept). */
  set(key: string, samples: Int16Array): void {
    if (samples.byteLength > this.maxEntryBytes || samples.length === 0) return;
    const old = this.map.get(key);
    if (old) {
      this.bytes -= old.byteLength;
      this.map.delete(key);
    }
    this.map.set(key, samples);
    this.bytes += samples.byteLength;
    for (const [k, v] of this.map) {
      if (this.bytes <= this.maxBytes) break;
      this.map.delete(k);
      this.bytes -= v.byteLength;
    }
  }

  get size(): number {
    return this.map.size;
  }
}
