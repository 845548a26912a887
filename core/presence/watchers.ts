/**
 * Who watches a resource right now, in Redis so that every media-app node sees every other node's
 * subscriptions (a subscription itself lives on the node that took the SUBSCRIBE). One sorted set per
 * customer, event package and resource; a member per subscription (its id, the subscribing extension
 * and the Contact it subscribed from), scored with the epoch ms it expires at. A refresh re-scores it,
 * the end of a subscription removes it; a member whose node died without removing it lapses at its score.
 *
 * Its reader: the unsolicited MWI sender (media-app/voicemail/mwi-notifier.ts) leaves out a phone
 * that a live message-summary subscription already serves.
 */
import type { Redis } from 'ioredis';

export interface Watcher {
  /** The subscription's id (its SIP dialog's). */
  id: string;
  /** The subscribing extension's id. */
  owner: string;
  /** The SUBSCRIBE's Contact URI (where the phone takes requests). */
  contact: string;
}

export interface WatchedResource {
  customerId: string;
  event: string;
  name: string;
}

const member = (w: Watcher): string => JSON.stringify([w.id, w.owner, w.contact]);

function parseMember(m: string): Watcher | null {
  try {
    const v: unknown = JSON.parse(m);
    if (!Array.isArray(v) || v.length !== 3 || !v.every((x) => typeof x === 'string')) return null;
    const [id, owner, contact] = v as [string, string, string];
    return { id, owner, contact };
  } catch {
    return null;
  }
}

export class WatcherIndex {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  private key(r: WatchedResource): string {
    return `${this.keyPrefix}presence:watchers:${r.customerId}:${r.event}:${r.name}`;
  }

  /** Adds or refreshes a watcher until `expiresAt` (epoch ms). */
  async set(r: WatchedResource, w: Watcher, expiresAt: number): Promise<void> {
    const key = this.key(r);
    const res = await this.redis.multi().zadd(key, expiresAt, member(w)).zremrangebyscore(key, '-inf', Date.now()).zrange(key, '-1', '-1', 'WITHSCORES').exec();
    // the set lives as long as its last-expiring member
    const last = res?.[2]?.[1];
    const latest = Array.isArray(last) && last.length === 2 ? Number(last[1]) : expiresAt;
    await this.redis.pexpireat(key, Math.max(latest, expiresAt));
  }

  async remove(r: WatchedResource, w: Watcher): Promise<void> {
    await this.redis.zrem(this.key(r), member(w));
  }

  /** The watchers whose subscriptions have not expired. */
  async live(r: WatchedResource): Promise<Watcher[]> {
    const members = await this.redis.zrangebyscore(this.key(r), Date.now(), '+inf');
    return members.map(parseMember).filter((w): w is Watcher => w !== null);
  }
}
