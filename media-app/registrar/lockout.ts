/**
 * Lockout of failed digest authentications (REGISTER and INVITE share it), in Redis (shared by
 * nodes, survives restarts). Only answers to a nonce the platform issued to that source address
 * count (registrar: a made-up, expired or used nonce is challenged again and counts nothing, so
 * spoofed datagrams cannot lock anyone out). Three things are kept:
 *
 * - per source address and address-of-record: after `failures` failures within `windowSec` that
 *   address is refused for that AOR for `lockSec`, whatever the credentials and from whatever port
 *   (a guesser rotating ports gets no more guesses). A stranger guessing a victim's password locks
 *   only itself out; the victim's phones at other addresses are unaffected.
 * - per device (transport, address and port: one UDP socket, or one TCP/TLS/WS connection) that
 *   authenticated for the AOR: exempt from both locks for `DEVICE_TRUST_SEC` after its last success,
 *   so a second device behind the owner's address that guesses locks itself and its address out,
 *   not the owner's phone. A failure from such a device ends its exemption.
 * - per AOR across all addresses (a guesser spread over many addresses): after `aorFailures`
 *   failures within `aorWindowSec` the AOR is refused for `lockSec` to every address that has not
 *   authenticated for it within the last `TRUST_DAYS`. The owner's phones, which have, never see it.
 *
 * All count the same for an AOR that does not exist, so the lockout reveals nothing either.
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

/** Where a request came from: its address, and the device (transport, address and port) at it. */
export interface Source {
  address: string;
  port: number;
  protocol: string;
}

/** How long an address that authenticated for an AOR stays exempt from the per-AOR ceiling. */
export const TRUST_DAYS = 30;
/** How long a device that authenticated for an AOR stays exempt from the locks (renewed by each success). */
export const DEVICE_TRUST_SEC = 86_400;

export class Lockout {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly policy: LockoutPolicy,
  ) {}

  private key(kind: 'fail' | 'lock' | 'ok', aor: string, source: Source): string {
    // an IPv6 source counts by its /64 (a new address per guess is free for its holder)
    return `${this.prefix}reg-${kind}:${sourceSubject(source.address)}|${aor.toLowerCase()}`;
  }

  private deviceKey(aor: string, s: Source): string {
    return `${this.prefix}reg-dev:${s.protocol.toLowerCase()}:${s.address}:${s.port}|${aor.toLowerCase()}`;
  }

  private aorKey(kind: 'fail' | 'lock', aor: string): string {
    return `${this.prefix}reg-aor-${kind}:${aor.toLowerCase()}`;
  }

  /** Seconds until `source` may try `aor` again (rounded up), 0 when it may now. */
  async lockedFor(aor: string, source: Source): Promise<number> {
    const r = await this.redis
      .multi()
      .pttl(this.key('lock', aor, source))
      .pttl(this.aorKey('lock', aor))
      .exists(this.key('ok', aor, source))
      .exists(this.deviceKey(aor, source))
      .exec();
    const [own, all, trusted, device] = (r ?? []).map(([, v]) => Number(v));
    if (device === 1) return 0;
    const ms = Math.max(own ?? 0, trusted === 1 ? 0 : (all ?? 0));
    return ms > 0 ? Math.ceil(ms / 1000) : 0;
  }

  /**
   * Counts one failure of `source` for `aor`; the seconds of the lock it is now under (one it
   * started, or its address's lock that this device was spared until this failure), else 0.
   */
  async fail(aor: string, source: Source): Promise<number> {
    const own = this.key('fail', aor, source);
    const all = this.aorKey('fail', aor);
    const r = await this.redis
      .multi()
      .incr(own)
      .expire(own, this.policy.windowSec, 'NX')
      .incr(all)
      .expire(all, this.policy.aorWindowSec, 'NX')
      .del(this.deviceKey(aor, source))
      .exists(this.key('ok', aor, source))
      .pttl(this.key('lock', aor, source))
      .exec();
    const ownCount = Number(r?.[0]?.[1] ?? 0);
    const allCount = Number(r?.[2]?.[1] ?? 0);
    const trusted = Number(r?.[5]?.[1] ?? 0) === 1;
    const lockedMs = Number(r?.[6]?.[1] ?? 0);
    const m = this.redis.multi();
    let locked = false;
    if (allCount >= this.policy.aorFailures) {
      m.set(this.aorKey('lock', aor), '1', 'EX', this.policy.lockSec).del(all);
      // the lock applies to this address too unless it is trusted
      locked = !trusted;
    }
    if (ownCount >= this.policy.failures) {
      m.set(this.key('lock', aor, source), '1', 'EX', this.policy.lockSec).del(own);
      locked = true;
    }
    if (m.length) await m.exec();
    return locked ? this.policy.lockSec : lockedMs > 0 ? Math.ceil(lockedMs / 1000) : 0;
  }

  /**
   * A success: the device is exempt from the locks and its address trusted for the AOR. The
   * address's failures stay counted (the owner's phone re-registering must not give a guesser at
   * the same address a fresh set of guesses).
   */
  async succeed(aor: string, source: Source): Promise<void> {
    await this.redis
      .multi()
      .set(this.deviceKey(aor, source), '1', 'EX', DEVICE_TRUST_SEC)
      .set(this.key('ok', aor, source), '1', 'EX', TRUST_DAYS * 86_400)
      .exec();
  }
}
