/**
 * Lockout per address-of-record: after `failures` failed authentications within `windowSec`, the
 * AOR is refused for `lockSec`, whatever the credentials. Counted the same for an AOR that does not
 * exist, so the lockout reveals nothing either. State in Redis (shared by nodes, survives restarts).
 */
import type { Redis } from 'ioredis';

export interface LockoutPolicy {
  failures: number;
  windowSec: number;
  lockSec: number;
}

export class Lockout {
  constructor(private readonly redis: Redis, private readonly prefix: string, private readonly policy: LockoutPolicy) {}

  private failKey(aor: string): string {
    return `${this.prefix}reg-fail:${aor.toLowerCase()}`;
  }

  private lockKey(aor: string): string {
    return `${this.prefix}reg-lock:${aor.toLowerCase()}`;
  }

  async isLocked(aor: string): Promise<boolean> {
    return (await this.redis.exists(this.lockKey(aor))) === 1;
  }

  /** Seconds until the lock of an AOR ends (rounded up), 0 when it is not locked. */
  async lockedFor(aor: string): Promise<number> {
    const ms = await this.redis.pttl(this.lockKey(aor));
    return ms > 0 ? Math.ceil(ms / 1000) : 0;
  }

  /** Counts one failure; true when this one locked the AOR. */
  async fail(aor: string): Promise<boolean> {
    const key = this.failKey(aor);
    const [[, n]] = (await this.redis.multi().incr(key).expire(key, this.policy.windowSec, 'NX').exec()) as [[unknown, number]];
    if (n >= this.policy.failures) {
      await this.redis.multi().set(this.lockKey(aor), '1', 'EX', this.policy.lockSec).del(key).exec();
      return true;
    }
    return false;
  }

  async succeed(aor: string): Promise<void> {
    await this.redis.del(this.failKey(aor));
  }
}
