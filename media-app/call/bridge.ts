/**
 * Bridge: the one owner of the connection between two calls (or a call and a cross-node conference
 * leg), held by both (`CallSession.bridge`). Like mediasoup's pipeToRouter pair, each side's end
 * reaches the other through it; like SIP.js, it changes state in one guarded place (`move`, checked
 * against BRIDGE_MOVES in bridge-types.ts).
 *
 * It is the only code that links or unlinks two endpoints (media-engine `bridge`/`unbridge`):
 *   open      links the two sides (connect, queue service, cross-node conference leg);
 *   replace   puts another party in one side's place (blind transfer; REFER with Replaces by `join`);
 *   pause     unlinks them, both stay its members (an attended transfer's waiting side, hold, a
 *             supervision: media-app/pbx/supervise.ts mixes them with the supervisor meanwhile);
 *   resume    links them again;
 *   consult   links the consulting side to a target while the other waits (attended transfer): the
 *             consulting side's leave completes it (the target takes its place), the target's gives
 *             the waiting side back;
 *   close     unlinks and ends it (its opener).
 * A side that leaves closes it, and its rule (LeaveRule) says what happens to the other side.
 * A party holds at most one bridge; a party a bridge replaced is handed off: its own close leaves
 * its chained legs alone (they now belong to another call's bridge).
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import {
  BridgeError,
  canMoveBridge,
  type BridgeEnd,
  type BridgeEvents,
  type BridgeParty,
  type BridgeSlot,
  type BridgeState,
  type ConsultOutcome,
  type LeaveRule,
  type PauseReason,
} from './bridge-types';
import type { CloseReason } from './session-types';
import { forgetPeer, notePeerLeft, peerReason } from './close-reason';

export { BridgeError, BRIDGE_MOVES, canMoveBridge } from './bridge-types';
export type { BridgeEnd, BridgeParty, BridgeSlot, BridgeState, ConsultOutcome, LeaveRule, PauseReason } from './bridge-types';

/** The bridge each party holds; written only here. */
const held = new WeakMap<BridgeParty, Bridge>();
/** Parties a bridge replaced: their chained legs are no longer theirs to close. */
const handedOff = new WeakSet<BridgeParty>();

/** The bridge `p` holds, or null. */
export function bridgeOf(p: BridgeParty): Bridge | null {
  return held.get(p) ?? null;
}

/** True once a bridge put another party in `p`'s place. */
export function isHandedOff(p: BridgeParty): boolean {
  return handedOff.has(p);
}

/**
 * `p` starts to leave (CallSession.close calls it first, before its chained legs close, with why it
 * closes): its bridge reacts at once (a consultation completes, the other side is unlinked), so nothing
 * depends on the order of listeners on the party's end.
 */
export function partyLeaving(p: BridgeParty, reason?: CloseReason): void {
  held.get(p)?.leaving(p, reason);
}

interface Consultation {
  readonly consulter: BridgeParty;
  readonly target: BridgeParty;
  resolve(o: ConsultOutcome): void;
}

const noop = (): void => undefined;

export class Bridge extends EventEmitter<BridgeEvents> {
  private st: BridgeState = 'idle';
  private slots: { a: BridgeParty; b: BridgeParty };
  private rule: LeaveRule;
  private consultation: Consultation | null = null;
  private pausedFor: PauseReason | null = null;
  private media: Promise<void> = Promise.resolve();
  private readonly watched = new WeakSet<BridgeParty>();
  /** Resolves once closed, after the rule was applied to the side that stayed. */
  readonly ended: Promise<BridgeEnd>;
  private resolveEnded!: (e: BridgeEnd) => void;

  private constructor(
    a: BridgeParty,
    b: BridgeParty,
    rule: LeaveRule,
    private readonly log: Logger | null,
  ) {
    super();
    this.slots = { a, b };
    this.rule = rule;
    this.ended = new Promise((r) => (this.resolveEnded = r));
    this.on('error', noop);
  }

  /**
   * Links a and b (both live, with media, in no other bridge) under `rule`. A side leaving while the
   * link is made closes it by its rule as any leave does (see `ended`); a link that fails closes it
   * and rejects.
   */
  static async open(a: BridgeParty, b: BridgeParty, rule: LeaveRule, log: Logger | null = null): Promise<Bridge> {
    if (a === b) throw new BridgeError('a party cannot be bridged to itself');
    for (const p of [a, b]) checkFree(p, null);
    if (rule.kind === 'return_to_flow' && rule.owner !== a && rule.owner !== b) throw new BridgeError('the owner of a return_to_flow bridge must be one of its sides');
    const br = new Bridge(a, b, rule, log);
    held.set(a, br);
    held.set(b, br);
    br.watch(a);
    br.watch(b);
    // a new bridge: what an earlier peer's death told either side no longer says how it ends
    forgetPeer(a);
    forgetPeer(b);
    try {
      await br.link(a, b);
    } catch (err) {
      if (br.st !== 'closed') br.finish('closed', null, null);
      throw err;
    }
    if (br.st === 'idle') br.move('open');
    return br;
  }

  /**
   * REFER with Replaces (RFC 3891): the parties bridged to `t1` (in b1) and to `t2` (in b2) are joined
   * in b1 under b1's rule; b2 ends `merged` (its rule not applied) and t1, t2 are handed off (the
   * caller hangs them up).
   */
  static async join(b1: Bridge, t1: BridgeParty, b2: Bridge, t2: BridgeParty): Promise<void> {
    const y = b2.other(t2);
    if (b1 === b2 || !y || !b1.other(t1)) throw new BridgeError('the two calls are not bridged to two other parties');
    for (const b of [b1, b2]) if (b.st !== 'open' && b.st !== 'paused') throw new BridgeError(`a ${b.st} bridge cannot be joined`);
    const { a, b } = b2.slots;
    b2.move('closed');
    held.delete(a);
    held.delete(b);
    handedOff.add(t2);
    const end: BridgeEnd = { why: 'merged', slot: null, left: null, survivor: null, a, b };
    b2.emit('closed', end);
    b2.resolveEnded(end);
    await b1.replace(t1, y);
  }

  get state(): BridgeState {
    return this.st;
  }

  /** Why it is paused (null when not paused). */
  get pauseReason(): PauseReason | null {
    return this.st === 'paused' ? this.pausedFor : null;
  }

  /** The party in each slot (a: the side that opened it, e.g. connect's master). */
  get parties(): Readonly<{ a: BridgeParty; b: BridgeParty }> {
    return this.slots;
  }

  /** The party `p` is bridged to here (a consulted target's: the consulting side), or null. */
  other(p: BridgeParty): BridgeParty | null {
    if (this.st === 'closed') return null;
    if (p === this.slots.a) return this.slots.b;
    if (p === this.slots.b) return this.slots.a;
    if (this.consultation?.target === p) return this.consultation.consulter;
    return null;
  }

  private slotOf(p: BridgeParty): BridgeSlot | null {
    return p === this.slots.a ? 'a' : p === this.slots.b ? 'b' : null;
  }

  /** Puts `by` in `old`'s place (a blind transfer's target); linked at once unless paused. */
  async replace(old: BridgeParty, by: BridgeParty): Promise<void> {
    const slot = this.slotOf(old);
    if (!slot) throw new BridgeError(`${old.id} is not a side of this bridge`);
    if (this.st === 'consulting') throw new BridgeError('a consulting bridge changes sides only when its consultation ends');
    checkFree(by, this);
    this.move(this.st);
    this.swap(slot, old, by);
    forgetPeer(by);
    if (this.st === 'open') await this.link(this.slots.a, this.slots.b);
  }

  /** Unlinks the two sides; both stay its members. */
  async pause(reason: PauseReason): Promise<void> {
    if (this.st !== 'open') throw new BridgeError(`only an open bridge pauses (this one is ${this.st})`);
    this.move('paused');
    this.pausedFor = reason;
    await this.unlink(this.slots.a);
  }

  /** Links the two sides again after a pause. */
  async resume(): Promise<void> {
    if (this.st !== 'paused') throw new BridgeError(`only a paused bridge resumes (this one is ${this.st})`);
    this.move('open');
    this.pausedFor = null;
    await this.link(this.slots.a, this.slots.b);
  }

  /**
   * A paused bridge's side `consulter` talks to `target` while the other side waits. Resolves once
   * they are linked, with `ended`: how the consultation ends (ConsultOutcome).
   */
  async consult(consulter: BridgeParty, target: BridgeParty): Promise<{ ended: Promise<ConsultOutcome> }> {
    if (!this.slotOf(consulter)) throw new BridgeError(`${consulter.id} is not a side of this bridge`);
    checkFree(target, null);
    this.move('consulting');
    const ended = new Promise<ConsultOutcome>((resolve) => (this.consultation = { consulter, target, resolve }));
    held.set(target, this);
    this.watch(target);
    await this.link(consulter, target);
    return { ended };
  }

  /** Unlinks and ends it; no rule applies (its opener is done with it). */
  close(): Promise<BridgeEnd> {
    if (this.st !== 'closed') this.finish('closed', null, null);
    return this.ended;
  }

  /** One of its parties leaves (partyLeaving with why it closes, or its `done`). Idempotent. */
  leaving(p: BridgeParty, reason?: CloseReason): void {
    if (this.st === 'closed') return;
    const c = this.consultation;
    if (c && p === c.target) {
      // the target left: the consulting side gets the waiting side back
      this.consultation = null;
      held.delete(p);
      this.move('open');
      void this.link(this.slots.a, this.slots.b).catch(noop);
      c.resolve('target_left');
      return;
    }
    if (c && p === c.consulter && !c.target.isEnded) {
      // the consulting side left: the target takes its place and talks to the waiting side
      this.consultation = null;
      this.move('open');
      this.swap(this.slotOf(p)!, p, c.target);
      void this.link(this.slots.a, this.slots.b).catch(noop);
      c.resolve('complete');
      return;
    }
    const slot = this.slotOf(p);
    if (slot) this.finish('left', slot, p, reason);
  }

  /** The one change of state: checked against BRIDGE_MOVES, then announced. */
  private move(to: BridgeState): void {
    const from = this.st;
    if (!canMoveBridge(from, to)) throw new BridgeError(`bridge move ${from} → ${to} refused`);
    this.st = to;
    this.emit('state', to, from);
  }

  private swap(slot: BridgeSlot, old: BridgeParty, by: BridgeParty): void {
    this.slots = slot === 'a' ? { a: by, b: this.slots.b } : { a: this.slots.a, b: by };
    if (held.get(old) === this) held.delete(old);
    handedOff.add(old);
    held.set(by, this);
    this.watch(by);
    // the owner's flow no longer waits on this bridge
    if (this.rule.kind === 'return_to_flow' && this.rule.owner === old) this.rule = { kind: 'hangup_other' };
    else if (this.rule.kind === 'return_both') this.rule = { kind: 'return_to_flow', owner: slot === 'a' ? this.slots.b : this.slots.a };
    this.emit('replaced', old, by);
  }

  private watch(p: BridgeParty): void {
    if (this.watched.has(p)) return;
    this.watched.add(p);
    const gone = () => this.leaving(p);
    p.done.then(gone, gone);
  }

  /**
   * Closed: unlinked at once; once the side that left has ended, the rule applies to the other, which
   * is told what the leaving side's death says (close-reason.ts peerReason): on its BYE when the rule
   * hangs it up, and on the BYE of its own end when it is returned (notePeerLeft).
   */
  private finish(why: 'left' | 'closed', slot: BridgeSlot | null, left: BridgeParty | null, reason?: CloseReason): void {
    this.move('closed');
    const { a, b } = this.slots;
    const c = this.consultation;
    this.consultation = null;
    for (const p of [a, b, c?.target]) if (p && held.get(p) === this) held.delete(p);
    c?.resolve(why === 'closed' ? 'closed' : left === c.consulter ? 'target_left' : 'peer_left');
    const survivor = slot === 'a' ? b : slot === 'b' ? a : null;
    const settle = async (): Promise<BridgeEnd> => {
      await this.unlink(survivor ?? a).catch(noop);
      if (c) await this.unlink(c.consulter).catch(noop);
      let action: BridgeEnd['survivor'] = null;
      if (survivor && left) {
        await left.done.catch(noop);
        const told = peerReason(reason);
        if (this.rule.kind === 'return_both' || (this.rule.kind === 'return_to_flow' && this.rule.owner === survivor)) {
          notePeerLeft(survivor, told);
          action = 'returned';
        } else {
          await survivor.hangup('normal', told).catch(noop);
          action = 'hung_up';
        }
      }
      return { why, slot, left, survivor: action, a, b };
    };
    void settle().then(
      (end) => {
        this.emit('closed', end);
        this.resolveEnded(end);
      },
      (err: Error) => {
        this.log?.error({ err: err.message }, 'bridge close failed');
        this.resolveEnded({ why, slot, left, survivor: null, a, b });
      },
    );
  }

  /** Media steps run one at a time, in order; a failure is logged and rejects its caller. */
  private run(what: string, fn: () => Promise<void>): Promise<void> {
    const next = this.media.then(fn);
    this.media = next.catch((err: Error) => this.log?.warn({ err: err.message, what }, 'bridge media step failed'));
    return next;
  }

  private link(x: BridgeParty, y: BridgeParty): Promise<void> {
    return this.run('link', async () => {
      if (this.st === 'closed' || x.isEnded || y.isEnded) return;
      const [ex, ey] = [x.endpoint, y.endpoint];
      if (!ex || !ey) throw new BridgeError('a side of the bridge has no media');
      await ex.bridge(ey);
    });
  }

  private unlink(p: BridgeParty): Promise<void> {
    return this.run('unlink', async () => {
      const ep = p.endpoint;
      if (ep && !ep.destroyed) await ep.unbridge();
    });
  }
}

/** A party that may join a bridge: live, with media, holding no bridge (or only `mine`). */
function checkFree(p: BridgeParty, mine: Bridge | null): void {
  if (p.isEnded) throw new BridgeError(`${p.id} has ended`);
  if (!p.endpoint) throw new BridgeError(`${p.id} has no media`);
  const h = held.get(p);
  if (h && h !== mine) throw new BridgeError(`${p.id} is bridged already`);
}
