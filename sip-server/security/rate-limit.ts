// Per-source-IP token bucket with a temporary ban (in process memory: it must decide per packet).
import net from 'node:net';

export interface RateLimitOptions {
  requestsPerSecond: number;
  burst: number;
  /** Refused requests within one second that turn a throttle into a ban. */
  banThreshold: number;
  banSeconds: number;
  /** Exact IPs or IPv4 CIDRs never limited. */
  allowlist: string[];
}

export type Verdict = 'allow' | 'throttle' | 'banned';

interface Bucket { tokens: number; last: number; refused: number; refusedWindow: number; bannedUntil: number }

function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((a, o) => (a << 8) + Number(o), 0) >>> 0;
}

export class SourceRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly exact = new Set<string>();
  private readonly cidrs: { base: number; mask: number }[] = [];
  private sweepTimer: NodeJS.Timeout;
  /** Called when a source gets banned. */
  onBan?: (address: string, until: number) => void;

  constructor(private readonly opts: RateLimitOptions) {
    for (const a of opts.allowlist) {
      const m = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(a);
      if (m) {
        const bits = Number(m[2]);
        const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
        this.cidrs.push({ base: ipv4ToInt(m[1]) & mask, mask });
      } else this.exact.add(a);
    }
    this.sweepTimer = setInterval(() => this.sweep(), 10_000);
    this.sweepTimer.unref();
  }

  isAllowlisted(address: string): boolean {
    const a = address.startsWith('::ffff:') ? address.slice(7) : address;
    if (this.exact.has(a) || this.exact.has(address)) return true;
    if (this.cidrs.length && net.isIPv4(a)) {
      const n = ipv4ToInt(a);
      return this.cidrs.some((c) => ((n & c.mask) >>> 0) === c.base);
    }
    return false;
  }

  /** Cheap check for the receive path: is this source currently banned? */
  isBanned(address: string, now = Date.now()): boolean {
    const b = this.buckets.get(address);
    return !!b && b.bannedUntil > now;
  }

  /** Account one request from `address`. */
  take(address: string, now = Date.now()): Verdict {
    if (this.isAllowlisted(address)) return 'allow';
    let b = this.buckets.get(address);
    if (!b) {
      b = { tokens: this.opts.burst, last: now, refused: 0, refusedWindow: now, bannedUntil: 0 };
      this.buckets.set(address, b);
    }
    if (b.bannedUntil > now) return 'banned';
    b.tokens = Math.min(this.opts.burst, b.tokens + ((now - b.last) / 1000) * this.opts.requestsPerSecond);
    b.last = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 'allow';
    }
    if (now - b.refusedWindow > 1000) { b.refusedWindow = now; b.refused = 0; }
    if (++b.refused >= this.opts.banThreshold) {
      b.bannedUntil = now + this.opts.banSeconds * 1000;
      b.refused = 0;
      this.onBan?.(address, b.bannedUntil);
      return 'banned';
    }
    return 'throttle';
  }

  /** Lift a ban (admin action, tests). */
  unban(address: string): void { this.buckets.delete(address); }

  get bannedCount(): number {
    const now = Date.now();
    let n = 0;
    for (const b of this.buckets.values()) if (b.bannedUntil > now) n++;
    return n;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, b] of this.buckets) {
      if (b.bannedUntil <= now && b.tokens >= this.opts.burst - 1 && now - b.last > 60_000) this.buckets.delete(k);
    }
  }

  close(): void { clearInterval(this.sweepTimer); }
}
