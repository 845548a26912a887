/**
 * Registration bindings in Redis (RFC 3261 §10.3): one hash per address-of-record, a field per
 * Contact URI, each with its own absolute expiry. Kept in Redis so that they survive a media-app
 * restart and every node sees them; the key itself expires with its longest binding.
 */
import type { Redis } from 'ioredis';

export interface Binding {
  contact: string;
  /** Epoch ms. */
  expiresAt: number;
  callId: string;
  cseq: number;
  /**
   * Where the REGISTER came from (NAT: we send to this, not to the Contact host). `protocol` is the
   * transport it arrived on: udp, tcp, tls, ws or wss; ws/wss contacts are browsers (WebRTC media)
   * reachable only over that very connection.
   */
  source: { address: string; port: number; protocol: string };
  userAgent: string;
  /**
   * RFC 3327 Path of a REGISTER relayed by a trusted edge (media-app/kit/edge.ts), first hop
   * first: calls to this contact are sent along it (Route), through the edge that holds the phone's
   * NAT binding or connection.
   */
  path?: string[];
}

export const bindingKey = (aor: string): string => `reg:${aor.toLowerCase()}`;

export class BindingStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly now = () => Date.now(),
  ) {}

  private key(aor: string): string {
    return this.prefix + bindingKey(aor);
  }

  /** Live bindings of an AOR (expired ones are dropped as a side effect). */
  async get(aor: string): Promise<Binding[]> {
    const all = await this.redis.hgetall(this.key(aor));
    const now = this.now();
    const live: Binding[] = [];
    const dead: string[] = [];
    for (const [field, raw] of Object.entries(all)) {
      try {
        const b = JSON.parse(raw) as Binding;
        if (b.expiresAt > now) live.push(b);
        else dead.push(field);
      } catch {
        dead.push(field);
      }
    }
    if (dead.length) await this.redis.hdel(this.key(aor), ...dead);
    return live.sort((a, b) => b.expiresAt - a.expiresAt);
  }

  /**
   * Adds, refreshes (expires > 0) or removes (expires 0) bindings. A request with an older CSeq on
   * the same Call-ID than the stored binding is out of order and changes nothing (§10.3 step 7).
   */
  async update(aor: string, changes: { binding: Binding; expires: number }[]): Promise<Binding[]> {
    const key = this.key(aor);
    const existing = new Map((await this.get(aor)).map((b) => [b.contact, b]));
    const multi = this.redis.multi();
    for (const { binding, expires } of changes) {
      const old = existing.get(binding.contact);
      if (old && old.callId === binding.callId && old.cseq >= binding.cseq) continue;
      if (expires === 0) {
        multi.hdel(key, binding.contact);
        existing.delete(binding.contact);
      } else {
        const b = { ...binding, expiresAt: this.now() + expires * 1000 };
        multi.hset(key, binding.contact, JSON.stringify(b));
        existing.set(binding.contact, b);
      }
    }
    const longest = Math.max(0, ...[...existing.values()].map((b) => b.expiresAt - this.now()));
    if (longest > 0) multi.pexpire(key, longest + 1000);
    else multi.del(key);
    await multi.exec();
    return [...existing.values()];
  }

  /** Drop the bindings made over one connection (a WebSocket flow that ended); how many went. */
  async removeFlow(aor: string, flow: Binding['source']): Promise<number> {
    const gone = (await this.get(aor)).filter((b) => b.source.address === flow.address && b.source.port === flow.port && b.source.protocol === flow.protocol);
    if (gone.length) await this.redis.hdel(this.key(aor), ...gone.map((b) => b.contact));
    return gone.length;
  }

  async removeAll(aor: string): Promise<void> {
    await this.redis.del(this.key(aor));
  }
}
