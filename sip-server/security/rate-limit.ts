// Flood protection that does not punish a whole NAT (in process memory: it decides per packet).
//
//   1. Token bucket per source address:port (requestsPerSecond, burst). A port refused
//      banThreshold times within one second is banned for banSeconds: its datagrams are dropped.
//   2. The address is banned (every port) only when addressBanPorts of its ports were banned within
//      banSeconds, or when its unbanned ports together exceed addressRateFactor times the per-port
//      rate and burst and are refused banThreshold times within one second (a flood that rotates
//      its source port).
//   3. Never banned: allow-listed addresses (never limited either), trusted addresses (a trunk's or
//      provider's, learned from accepted INVITEs), and trusted contacts (a registered phone's
//      address:port, a trunk's port that had a call accepted): those pass even when their address is
//      banned. A trusted contact is throttled by its own port bucket only and does not count towards
//      its address. Another port of a trusted address is held to its port bucket and the address share
//      (any customer can make its own address a trunk's), and that port alone may be banned: one
//      flooding device behind a trunk's or phones' shared address never starves the trusted ones.
import net from 'node:net';
import { TrustedSources, contactKey, type Trust } from './trusted';

export interface RateLimitOptions {
  requestsPerSecond: number;
  burst: number;
  /** Refused requests within one second that turn a throttle into a ban. */
  banThreshold: number;
  banSeconds: number;
  /** Banned ports of one address (within banSeconds) that ban the address. */
  addressBanPorts: number;
  /** An address's unbanned ports together get this many times the per-port rate and burst. */
  addressRateFactor: number;
  /** Exact IPs or IPv4 CIDRs never limited. */
  allowlist: string[];
}

export type Verdict = 'allow' | 'throttle' | 'banned';
export type BanScope = 'port' | 'address';

/** A token bucket that counts its refusals per second and remembers a ban. */
class Bucket {
  tokens: number;
  last: number;
  refused = 0;
  refusedWindow: number;
  bannedUntil = 0;
  constructor(
    readonly rate: number,
    readonly size: number,
    now: number,
  ) {
    this.tokens = size;
    this.last = now;
    this.refusedWindow = now;
  }

  take(now: number): boolean {
    this.tokens = Math.min(this.size, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Counts a refusal; true when the refusals of the current second reach `threshold`. */
  refuse(now: number, threshold: number): boolean {
    if (now - this.refusedWindow > 1000) {
      this.refusedWindow = now;
      this.refused = 0;
    }
    if (++this.refused < threshold) return false;
    this.refused = 0;
    return true;
  }

  idle(now: number): boolean {
    return this.bannedUntil <= now && this.tokens >= this.size - 1 && now - this.last > 60_000;
  }
}

interface AddressState {
  bucket: Bucket;
  portBans: number[];
}

function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((a, o) => (a << 8) + Number(o), 0) >>> 0;
}

export class SourceRateLimiter {
  private readonly ports = new Map<string, Bucket>();
  private readonly addresses = new Map<string, AddressState>();
  private readonly trusted = new TrustedSources();
  private readonly exact = new Set<string>();
  private readonly cidrs: { base: number; mask: number }[] = [];
  private sweepTimer: NodeJS.Timeout;
  /** Called when a source address:port (scope 'port', `who` = "address|port") or a whole address gets banned. */
  onBan?: (who: string, scope: BanScope, until: number) => void;

  constructor(private readonly opts: RateLimitOptions) {
    for (const a of opts.allowlist) {
      const m = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(a);
      if (m) {
        const bits = Number(m[2]);
        const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
        this.cidrs.push({ base: (ipv4ToInt(m[1]) & mask) >>> 0, mask }); // unsigned, as the check compares
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
      return this.cidrs.some((c) => (n & c.mask) >>> 0 === c.base);
    }
    return false;
  }

  /** Learn (or forget) a trusted source from an application's answer (see trusted.ts). */
  trust(t: Trust): void {
    this.trusted.apply(t);
  }

  /** Never banned: allow-listed, a trusted address, or a trusted contact address:port. */
  isExempt(address: string, port: number, now = Date.now()): boolean {
    return this.isAllowlisted(address) || this.trusted.isAddress(address, now) || this.trusted.isContact(address, port, now);
  }

  /** Cheap check for the receive path: is this source currently banned? */
  isBanned(address: string, port: number, now = Date.now()): boolean {
    const p = this.ports.get(contactKey(address, port));
    const a = this.addresses.get(address);
    const portBanned = !!p && p.bannedUntil > now;
    if (!portBanned && !(a && a.bucket.bannedUntil > now)) return false;
    if (this.isAllowlisted(address) || this.trusted.isContact(address, port, now)) return false;
    // a trusted address is never banned as a whole; a flooding port of it is
    return this.trusted.isAddress(address, now) ? portBanned : true;
  }

  /** Account one request from `address`:`port`. */
  take(address: string, port: number, now = Date.now()): Verdict {
    if (this.isAllowlisted(address)) return 'allow';
    const key = contactKey(address, port);
    const registered = this.trusted.isContact(address, port, now);
    let p = this.ports.get(key);
    if (!p) {
      p = new Bucket(this.opts.requestsPerSecond, this.opts.burst, now);
      this.ports.set(key, p);
    }
    if (registered) return p.take(now) ? 'allow' : 'throttle';
    // a trunk's address is customer input (allowed_ips): never banned as a whole, held to the address share
    const trustedAddress = this.trusted.isAddress(address, now);
    const a = this.address(address, now);
    if ((a.bucket.bannedUntil > now && !trustedAddress) || p.bannedUntil > now) return 'banned';
    if (!p.take(now)) {
      if (!p.refuse(now, this.opts.banThreshold)) return 'throttle';
      p.bannedUntil = now + this.opts.banSeconds * 1000;
      this.onBan?.(key, 'port', p.bannedUntil);
      if (trustedAddress) return 'banned';
      a.portBans = a.portBans.filter((t) => t > now - this.opts.banSeconds * 1000);
      a.portBans.push(now);
      if (a.portBans.length >= this.opts.addressBanPorts) this.banAddress(address, a, now);
      return 'banned';
    }
    if (a.bucket.take(now)) return 'allow';
    if (trustedAddress) return 'throttle';
    if (a.bucket.refuse(now, this.opts.banThreshold)) {
      this.banAddress(address, a, now);
      return 'banned';
    }
    return 'throttle';
  }

  private address(address: string, now: number): AddressState {
    let a = this.addresses.get(address);
    if (!a) {
      const f = this.opts.addressRateFactor;
      a = { bucket: new Bucket(this.opts.requestsPerSecond * f, this.opts.burst * f, now), portBans: [] };
      this.addresses.set(address, a);
    }
    return a;
  }

  private banAddress(address: string, a: AddressState, now: number): void {
    a.bucket.bannedUntil = now + this.opts.banSeconds * 1000;
    a.portBans = [];
    this.onBan?.(address, 'address', a.bucket.bannedUntil);
  }

  /** Lift the bans of an address and all its ports (admin action, tests). */
  unban(address: string): void {
    this.addresses.delete(address);
    for (const k of this.ports.keys()) if (k.startsWith(`${address}|`)) this.ports.delete(k);
  }

  /** Banned addresses and address:ports. */
  get bannedCount(): number {
    const now = Date.now();
    let n = 0;
    for (const b of this.ports.values()) if (b.bannedUntil > now) n++;
    for (const a of this.addresses.values()) if (a.bucket.bannedUntil > now) n++;
    return n;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, b] of this.ports) if (b.idle(now)) this.ports.delete(k);
    for (const [k, a] of this.addresses) {
      if (a.bucket.idle(now) && !a.portBans.some((t) => t > now - this.opts.banSeconds * 1000)) this.addresses.delete(k);
    }
    this.trusted.sweep(now);
  }

  close(): void {
    clearInterval(this.sweepTimer);
  }
}
