/**
 * The lockout of wrong voicemail PINs across calls (docs/security.md "Voicemail PINs"), in Redis so
 * every media-app node sees the same counts and a restart forgets nothing. Two counts, each over a
 * window (`windowSec`, from its first failure):
 *
 * - per box: `failures` wrong PINs lock the box for `lockSec`, whoever calls (a guesser spread over
 *   many callers or numbers gets no more guesses). A right PIN clears the box's count (the owner's
 *   login forgives the owner's typos, and a guesser never has a right PIN).
 * - per caller (the call's source: an extension, a number, a SIP address) within the customer:
 *   `callerFailures` wrong logins, on any boxes or on box numbers that do not exist, lock that caller
 *   out of every box for `lockSec` (a scan over many boxes). A right PIN does not clear it: logging
 *   in to one's own box must not buy more guesses at others.
 *
 * The media-app voice menu counts (media-app/voicemail/login.ts); control-api unlocks a box
 * (POST /voicemail_boxes/{id}/unlock), which also frees the callers whose failures on that box
 * count (each box keeps the set of callers that failed on it while their counts live).
 */
import type { Redis } from 'ioredis';

export interface PinLockoutPolicy {
  failures: number;
  windowSec: number;
  lockSec: number;
  callerFailures: number;
}

/** What one wrong PIN did: the counts now, and the locks it started (seconds; 0 for none). */
export interface PinFailure {
  boxFailures: number;
  callerFailures: number;
  boxLockedSec: number;
  callerLockedSec: number;
}

const boxKey = (prefix: string, kind: 'fail' | 'lock' | 'callers', boxId: string) => `${prefix}vm-pin-${kind}:${boxId}`;
const callerKey = (prefix: string, kind: 'fail' | 'lock', customerId: string, caller: string) => `${prefix}vm-pin-caller-${kind}:${customerId}|${caller.toLowerCase()}`;

/**
 * Lifts the box's lock and count, and the locks and counts of the callers that failed on it (an
 * admin's unlock, control-api). Whether the box was locked.
 */
export async function unlockPinBox(redis: Redis, prefix: string, customerId: string, boxId: string): Promise<boolean> {
  const callers = await redis.smembers(boxKey(prefix, 'callers', boxId));
  const m = redis
    .multi()
    .del(boxKey(prefix, 'lock', boxId))
    .del(boxKey(prefix, 'fail', boxId))
    .del(boxKey(prefix, 'callers', boxId));
  for (const c of callers) m.del(callerKey(prefix, 'lock', customerId, c)).del(callerKey(prefix, 'fail', customerId, c));
  const r = await m.exec();
  return Number(r?.[0]?.[1] ?? 0) > 0;
}

export class PinLockout {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly policy: PinLockoutPolicy,
  ) {}

  private box(kind: 'fail' | 'lock' | 'callers', boxId: string): string {
    return boxKey(this.prefix, kind, boxId);
  }

  private caller(kind: 'fail' | 'lock', customerId: string, caller: string): string {
    return callerKey(this.prefix, kind, customerId, caller);
  }

  /** Seconds until the caller may try (rounded up), 0 when it may: the caller's own lock. */
  async callerLockedFor(customerId: string, caller: string): Promise<number> {
    const ms = await this.redis.pttl(this.caller('lock', customerId, caller));
    return ms > 0 ? Math.ceil(ms / 1000) : 0;
  }

  /** Seconds until the box takes a PIN again (rounded up), 0 when it does. */
  async boxLockedFor(boxId: string): Promise<number> {
    const ms = await this.redis.pttl(this.box('lock', boxId));
    return ms > 0 ? Math.ceil(ms / 1000) : 0;
  }

  /**
   * Counts one wrong login of `caller` on `box` (null: an unknown box number). `box.locked`: the box was
   * locked, so the try counts for the caller only (it must not lengthen the box's lock); the caller is
   * still noted as one that failed on the box, so that the box's unlock frees it too.
   */
  async fail(customerId: string, caller: string, box: { id: string; locked: boolean } | null): Promise<PinFailure> {
    const p = this.policy;
    const cf = this.caller('fail', customerId, caller);
    const m = this.redis.multi().incr(cf).expire(cf, p.windowSec, 'NX');
    const counted = box && !box.locked ? box.id : null;
    if (counted) m.incr(this.box('fail', counted)).expire(this.box('fail', counted), p.windowSec, 'NX');
    if (box) m.sadd(this.box('callers', box.id), caller.toLowerCase()).expire(this.box('callers', box.id), p.windowSec + p.lockSec);
    const r = await m.exec();
    const callerFailures = Number(r?.[0]?.[1] ?? 0);
    const boxFailures = counted ? Number(r?.[2]?.[1] ?? 0) : 0;
    const out: PinFailure = { boxFailures, callerFailures, boxLockedSec: 0, callerLockedSec: 0 };
    const locks = this.redis.multi();
    if (counted && boxFailures >= p.failures) {
      locks.set(this.box('lock', counted), '1', 'EX', p.lockSec).del(this.box('fail', counted));
      out.boxLockedSec = p.lockSec;
    }
    if (callerFailures >= p.callerFailures) {
      locks.set(this.caller('lock', customerId, caller), '1', 'EX', p.lockSec).del(cf);
      out.callerLockedSec = p.lockSec;
    }
    if (locks.length) await locks.exec();
    return out;
  }

  /** A right PIN: the box's count starts again (the caller's does not). */
  async succeed(boxId: string): Promise<void> {
    await this.redis.del(this.box('fail', boxId));
  }

  /** An admin's unlock (unlockPinBox). */
  unlock(customerId: string, boxId: string): Promise<boolean> {
    return unlockPinBox(this.redis, this.prefix, customerId, boxId);
  }
}

/** The caller a login is counted for: the call's source as `type:target`, lower case ('unknown' without one). */
export function pinCaller(source: { type?: string; target?: string } | null | undefined): string {
  const target = (source?.target ?? '').trim();
  return target ? `${source?.type || 'tel'}:${target}`.toLowerCase() : 'unknown';
}
