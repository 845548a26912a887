/**
 * The switch's session (channel) counts, as HEARTBEAT and `status` report them: live sessions, the
 * limit, sessions since start, the peak, and sessions created in the last second. The SIP face opens
 * and closes sessions (one per channel); until it does, every count is 0, as on an idle FreeSWITCH.
 */
export class SessionCounts {
  private readonly live = new Set<string>();
  private created = 0;
  private peakLive = 0;
  private peakPerSec = 0;
  /** creation times (ms) within the last second, oldest first */
  private recent: number[] = [];

  constructor(
    readonly max: number,
    private readonly now: () => number,
  ) {}

  /** A session began; false (and nothing counted) when the limit is reached or the id is already open. */
  open(uuid: string): boolean {
    if (this.live.size >= this.max || this.live.has(uuid)) return false;
    this.live.add(uuid);
    this.created++;
    this.peakLive = Math.max(this.peakLive, this.live.size);
    this.recent.push(this.now());
    this.peakPerSec = Math.max(this.peakPerSec, this.perSecond());
    return true;
  }

  close(uuid: string): void {
    this.live.delete(uuid);
  }

  has(uuid: string): boolean {
    return this.live.has(uuid);
  }

  get count(): number {
    return this.live.size;
  }

  get sinceStartup(): number {
    return this.created;
  }

  get peak(): number {
    return this.peakLive;
  }

  get peakPerSecond(): number {
    return this.peakPerSec;
  }

  /** Sessions created in the last 1000 ms. */
  perSecond(): number {
    const since = this.now() - 1000;
    let i = 0;
    while (i < this.recent.length && this.recent[i]! <= since) i++;
    if (i) this.recent = this.recent.slice(i);
    return this.recent.length;
  }
}
