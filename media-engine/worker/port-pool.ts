/**
 * The RTP port range shared by all workers of a MediaServer. Ports go out in even/odd pairs
 * (RTP on the even port, RTCP on the next), round-robin so a just-freed port rests before reuse.
 * A port some other process holds is skipped for a while.
 */

export class PortPool {
  private free: number[] = [];
  private readonly inUse = new Set<number>();
  private readonly quarantine = new Map<number, number>(); // port -> time it may be retried

  constructor(
    readonly min: number,
    readonly max: number,
  ) {
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1024 || max > 65535 || max - min < 1) {
      throw new RangeError(`bad RTP port range ${min}-${max}`);
    }
    for (let p = min + (min % 2); p + 1 <= max; p += 2) this.free.push(p);
  }

  get capacity(): number {
    return this.free.length + this.inUse.size + this.quarantine.size;
  }

  get available(): number {
    return this.free.length + this.quarantine.size;
  }

  get allocated(): number {
    return this.inUse.size;
  }

  acquire(): number | null {
    const now = Date.now();
    for (const [p, until] of this.quarantine) {
      if (until <= now) {
        this.quarantine.delete(p);
        this.free.push(p);
      }
    }
    const p = this.free.shift();
    if (p === undefined) return null;
    this.inUse.add(p);
    return p;
  }

  release(port: number): void {
    if (!this.inUse.delete(port)) return;
    this.free.push(port);
  }

  /** The port was taken by someone else: try it again later. */
  reject(port: number, retryMs = 30_000): void {
    if (!this.inUse.delete(port)) return;
    this.quarantine.set(port, Date.now() + retryMs);
  }
}
