/** A small in-process cache with per-entry expiry and a size cap (oldest evicted first). */
export class TtlCache<V> {
  private readonly map = new Map<string, { v: V; until: number }>();
  constructor(
    private ttlMs: number,
    private readonly max = 10_000,
  ) {}

  get(key: string): V | undefined {
    if (this.ttlMs <= 0) return undefined;
    const e = this.map.get(key);
    if (!e) return undefined;
    if (e.until <= Date.now()) {
      this.map.delete(key);
      return undefined;
    }
    return e.v;
  }

  set(key: string, v: V): void {
    if (this.ttlMs <= 0) return;
    if (this.map.size >= this.max) {
      const first = this.map.keys().next();
      if (!first.done) this.map.delete(first.value);
    }
    this.map.set(key, { v, until: Date.now() + this.ttlMs });
  }

  delete(key: string): void {
    this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }
}
