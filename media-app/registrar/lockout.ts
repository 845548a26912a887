/**
 * Lockout of failed digest authentications (REGISTER and INVITE share it), in Redis (shared by
 * nodes, survives restarts). Two counters:
 *
 * - per source address and address-of-record: after `failures` failures within `windowSec` that
 *   address is refused for that AOR for `lockSec`, whatever the credentials. A stranger guessing a
 *   victim's password locks only itself out; the victim's phones at other addresses are unaffected.
 * - per AOR across all addresses (a guesser spread over many addresses): after `aorFailures`
 *   failures within `aorWindowSec` the AOR is refused for `lockSec` to every address that has not
 *   authenticated for it within the last `trustDays`. The owner's phones, which have, never see it.
 *
 * Both count the same for an AOR that does not exist, so the lockout reveals nothing either.
 */
import type { Redis } from 'ioredis';
import { sourceSubject } from '../../core/net';

export interface LockoutPolicy {
  failures: number;
  windowSec: number;
  lockSec: number;
  /** Failures from all addresses together that lock the AOR for addresses it does not trust. */
  aorFailures: number;
  aorWindowSec: number;
}

/** How long an address that authenticated for an AOR stays exempt from the per-AOR ceiling. */
export const TRUST_DAYS = 30;

export class Lockout {
  constructor(private readonly redis: Redis, private readonly prefix: string, private readonly policy: LockoutPolicy) {}

  private key(kind: 'fail' | 'lock' | 'ok', aor: string, source: string): string {
    // an IPv6 source counts by its /64 (a new address per guess is free for its holder)
    return `${this.prefix}reg-${kind}:${sourceSubject(source)}|${aor.toLowerCase()}`;
  }

  private aorKey(kind: 'fail' | 'lock', aor: string): string {
    return `${this.prefix}reg-aor-${kind}:${aor.toLowerCase()}`;
  }

  /** Seconds until `source` may try `aor` again (rounded up), 0 when it may now. */
  async lockedFor(aor: string, source: string): Promise<number> {
    const r = await this.redis.multi()
      .pttl(this.key('lock', aor, source))
      .pttl(this.aorKey('lock', aor))
      .exists(this.key('ok', aor, source))
      .exec();
    const [own, all, trusted] = (r ?? []).map(([, v]) => Number(v));
    const ms = Math.max(own ?? 0, trusted === 1 ? 0 : all ?? 0);
    return ms > 0 ? Math.ceil(ms / 1000) : 0;
  }

  /** Counts one failure of `source` for `aor`; the seconds of the lock it started, else 0. */
  async fail(aor: string, source: string): Promise<number> {
    const own = this.key('fail', aor, source);
    const all = this.aorKey('fail', aor);
    const r = await this.redis.multi()
      .incr(own).expire(own, this.policy.windowSec, 'NX')
      .incr(all).expire(all, this.policy.aorWindowSec, 'NX')
      .exec();
    const ownCount = Number(r?.[0]?.[1] ?? 0);
    const allCount = Number(r?.[2]?.[1] ?? 0);
    const m = this.redis.multi();
    let locked = false;
    if (allCount >= this.policy.aorFailures) {
      m.set(this.aorKey('lock', aor), '1', 'EX', this.policy.lockSec).del(all);
      // the lock applies to this address too unless it is trusted
      locked = (await this.redis.exists(this.key('ok', aor, source))) === 0;
    }
    if (ownCount >= this.policy.failures) {
      m.set(this.key('lock', aor, source), '1', 'EX', this.policy.lockSec).del(own);
      locked = true;
    }
    if (m.length) await m.exec();
    return locked ? this.policy.lockSec : 0;
  }

  /** A success: the address's failures are forgotten and it is trusted for the AOR. */
  async succeed(aor: string, source: string): Promise<void> {
    await this.redis.multi()
      .del(this.key('fail', aor, source))
      .set(this.key('ok', aor, source), '1', 'EX', TRUST_DAYS * 86_400)
      .exec();
  }
}
