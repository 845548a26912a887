/**
 * Refused `auth` attempts, per remote address: once an address has `max` refusals within `windowMs`,
 * its new connections are refused (text/rude-rejection, as FreeSWITCH's ACL refuses) until the oldest
 * of them leaves the window. Memory is bounded: addresses whose refusals have all aged out are dropped
 * when the table grows past `maxAddresses`, and beyond that the oldest entries go first.
 */
export interface AuthLimitOptions {
  max: number;
  windowMs: number;
  maxAddresses?: number;
}

export class AuthRefusals {
  private readonly byAddress = new Map<string, number[]>();
  private readonly maxAddresses: number;

  constructor(
    private readonly opts: AuthLimitOptions,
    private readonly now: () => number,
  ) {
    this.maxAddresses = opts.maxAddresses ?? 10_000;
  }

  /** Counts one refused attempt from `address`. */
  refused(address: string): void {
    const times = this.current(address);
    times.push(this.now());
    this.byAddress.delete(address);
    this.byAddress.set(address, times); // most recent last: the eviction below drops the oldest first
    if (this.byAddress.size > this.maxAddresses) this.prune();
  }

  /** True while `address` has `max` refusals within the window. */
  blocked(address: string): boolean {
    return this.current(address).length >= this.opts.max;
  }

  /** Addresses with a refusal in the window (for tests and metrics). */
  get size(): number {
    return this.byAddress.size;
  }

  private current(address: string): number[] {
    const times = this.byAddress.get(address);
    if (!times) return [];
    const since = this.now() - this.opts.windowMs;
    const kept = times.filter((t) => t > since);
    if (kept.length) this.byAddress.set(address, kept);
    else this.byAddress.delete(address);
    return kept;
  }

  private prune(): void {
    for (const a of [...this.byAddress.keys()]) this.current(a);
    for (const a of this.byAddress.keys()) {
      if (this.byAddress.size <= this.maxAddresses) break;
      this.byAddress.delete(a);
    }
  }
}
