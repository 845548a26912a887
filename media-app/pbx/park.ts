/**
 * Call park (Asterisk res_parking semantics; docs/pbx.md "Park"). A parked call keeps its Bridge:
 * a ParkHolder (park-holder.ts) takes the parker's place in it, the parked party hears the node's
 * music on hold, and the slot (core/pbx/park-slots.ts, in Redis) names it to every node.
 *
 *   park      a blind transfer (REFER) to the lot parks the transferer's peer and tells the parker
 *             the slot (TTS) before releasing it; a dial to the lot, the flow action and the API park
 *             the call itself (no parker);
 *   retrieve  a call that dialled the slot (or the API's ring to an extension) takes the holder's place;
 *   timeout   after park_timeout_sec the parker is rung back (a groupcall); its answer takes the call,
 *             else (or with no parker) the fallback hangs the parked call up;
 *   leave     the parked call hanging up frees the slot.
 * Events call_parked, call_unparked (with `reason`) and park_timeout; every change of a slot's state
 * is emitted from one place (`slotState`) for the busy-lamp subscriptions. A parked call's state moves
 * through park-moves.ts (PARK_MOVES, one guarded move); its park timeout is owned by `parked`.
 */
import { EventEmitter } from 'node:events';
import { publishResourceEvent, type EventType } from '../../core/events/catalogue';
import type { Address } from '../../core/repos/calls';
import { pbxSettingsRepo } from '../../core/pbx/settings';
import { parkSlots, type ParkedCall } from '../../core/pbx/park-slots';
import type { CallEndpoint } from '../media-server/endpoint';
import { Bridge, type BridgeParty } from '../call/bridge';
import type { CallFactory } from '../call/factory';
import { mohFile } from '../kit/moh-source';
import type { CallSession } from '../call/session';
import { createGroupcall } from '../groupcall/create';
import type { GroupcallRunner, RunningGroupcall } from '../groupcall/runner';
import { ParkHolder } from './park-holder';
import { ParkMoves, realParkClock, type ParkClock } from './park-moves';

export type { ParkedCall } from '../../core/pbx/park-slots';

/** Why a call left its slot (call_unparked `reason`). */
export type UnparkReason = 'retrieved' | 'ringback_answered' | 'hangup' | 'timeout_fallback';

/** A slot's state as a busy lamp shows it. */
export type SlotState = 'parked' | 'free';

export interface SlotStateEvents {
  change: [customerId: string, slot: number, state: SlotState, parked: ParkedCall];
}

/** What a retrieve found. */
export type RetrieveOutcome = 'retrieved' | 'empty' | 'elsewhere';

/** A call parked on this node. */
interface Parking {
  rec: ParkedCall;
  readonly call: CallSession;
  readonly holder: ParkHolder;
  /** Where it is (parked, retrieving, ringback, taken, fallback, left) and its park timeout. */
  readonly moves: ParkMoves;
  ringback: RunningGroupcall | null;
}

/** Stops of the park music with nothing played, in a row, after which it waits for the call's next move. */
const MUSIC_IDLE_STOPS = 3;

/** The slot said digit by digit ("7 0 1"), as a parking announcement does. */
export const slotWords = (slot: number) => String(slot).split('').join(' ');

export class ParkService {
  /** Slot state changes (parked / free), for BLF: the one place they are told. */
  readonly slotState = new EventEmitter<SlotStateEvents>();
  private readonly byCall = new Map<string, Parking>();

  /** `clock`: the parked calls' timers and now() (a virtual clock's in tests). */
  constructor(
    private readonly factory: CallFactory,
    private readonly runner: GroupcallRunner,
    private readonly clock: ParkClock = realParkClock,
  ) {}

  get deps() {
    return this.factory.deps;
  }

  private get slots() {
    return parkSlots(this.deps.redis, this.deps.config.redisKeyPrefix);
  }

  /** The call parked on this node in `slot` of the customer, if any. */
  local(customerId: string, slot: number): Parking | undefined {
    for (const p of this.byCall.values()) if (p.rec.customer_id === customerId && p.rec.slot === slot && p.moves.holding) return p;
    return undefined;
  }

  /**
   * Parks `call` in the customer's first free slot. `leaving`: the side that gave it up (the parker of
   * a blind transfer), whose place in the call's bridge the holder takes; without it the call is put
   * in a bridge of its own with the holder. Null when every slot is taken (nothing changes then).
   */
  async park(
    call: CallSession,
    o: {
      parker: Address | null;
      leaving: CallSession | null;
      announce?: (slot: number) => Promise<void>;
      /** a slot control-api claimed for the call (POST /parkedcalls) */
      claimed?: ParkedCall;
      /** this slot only (one of the customer's), not the first free one */
      slot?: number;
    },
  ): Promise<ParkedCall | null> {
    const codes = await pbxSettingsRepo(this.deps.db).get(call.row.customer_id);
    if (!o.claimed) await this.slots.sweepEnded(this.deps.db, call.row.customer_id);
    const now = Date.now();
    const rec =
      o.claimed ??
      (await this.slots.claim(o.slot ?? codes.park_slot_first, o.slot ?? codes.park_slot_last, {
        call_id: call.id,
        customer_id: call.row.customer_id,
        node_id: this.deps.calls.nodeId,
        parker: o.parker,
        tm_parked: new Date(now).toISOString(),
        tm_timeout: new Date(now + codes.park_timeout_sec * 1000).toISOString(),
      }));
    if (!rec) return null;
    let holder: ParkHolder | null = null;
    try {
      holder = await ParkHolder.make(this.deps, call);
      const bridge = call.bridge;
      if (bridge && o.leaving && bridge.other(call) === o.leaving) await bridge.replace(o.leaving, holder);
      else if (!bridge) await Bridge.open(call, holder, { kind: 'hangup_other' }, this.deps.logger);
      else throw new Error('the call is bridged to another party than the one parking it');
    } catch (err) {
      await holder?.hangup('park failed');
      await this.slots.release(rec.customer_id, rec.slot, call.id);
      throw err;
    }
    // the park timeout, owned by the parked state, from here
    const onTimeout = () => void this.timeout(p).catch((err: Error) => this.deps.logger.warn({ err: err.message, call: call.id }, 'park timeout failed'));
    const moves = new ParkMoves(call.id, this.deps.logger, this.clock, this.clock.now() + codes.park_timeout_sec * 1000, onTimeout);
    const p: Parking = { rec, call, holder, moves, ringback: null };
    this.byCall.set(call.id, p);
    // the parked call leaving (its bridge hangs the holder up) frees the slot
    void holder.done.then(() => this.leave(p, 'hangup'));
    void call.done.then(() => this.leave(p, 'hangup'));
    await o.announce?.(rec.slot);
    this.music(p);
    this.changed(rec, 'parked');
    this.deps.logger.info({ call: call.id, slot: rec.slot, customer: rec.customer_id }, 'call parked');
    await this.publish('call_parked', rec, {});
    return rec;
  }

  /**
   * The park.call command: parks a live call into the slot control-api claimed for it; its bridged
   * peer (if any) is released and rung back on timeout. A call not live here frees the slot.
   */
  async parkClaimed(callId: string, customerId: string, slot: number): Promise<void> {
    const rec = await this.slots.get(customerId, slot);
    if (!rec || rec.call_id !== callId) return;
    const call = this.factory.get(callId);
    if (!call || call.isEnded || !call.answered || this.byCall.has(callId)) {
      if (!this.byCall.has(callId)) await this.slots.release(customerId, slot, callId);
      return;
    }
    const peer = call.bridge?.other(call);
    const leaving = peer && !peer.isEnded && 'row' in peer ? (this.factory.get(peer.id) ?? null) : null;
    if (call.bridge && !leaving) {
      await this.slots.release(customerId, slot, callId);
      return;
    }
    const parker = leaving ? (leaving.row.direction === 'incoming' ? leaving.row.source : leaving.row.destination) : null;
    const parked = await this.park(call, { parker, leaving, claimed: { ...rec, parker } }).catch(async (err: Error) => {
      this.deps.logger.warn({ err: err.message, call: callId }, 'park failed');
      await this.slots.release(customerId, slot, callId);
      return null;
    });
    if (parked && leaving) await leaving.hangup('parked');
  }

  /** Puts `taker` (answered, live, unbridged) in the parked call's bridge; the slot frees. */
  async retrieve(customerId: string, slot: number, taker: CallSession): Promise<RetrieveOutcome> {
    const p = this.local(customerId, slot);
    if (!p) return (await this.slots.get(customerId, slot)) ? 'elsewhere' : 'empty';
    await this.takeOver(p, taker, 'retrieved', taker.id);
    return 'retrieved';
  }

  /** The call some node holds in the slot (slots of ended calls swept first), or null. */
  async slotRecord(customerId: string, slot: number): Promise<ParkedCall | null> {
    await this.slots.sweepEnded(this.deps.db, customerId);
    return this.slots.get(customerId, slot);
  }

  /**
   * A retriever on another node asks, through a PBX leg (xnode/pbx-leg.ts), for the call parked here in
   * `slot`: `answer` answers the leg (near the parked call's media), which then takes the holder's place.
   * 'empty': the call is not parked here in that slot any more (retrieved, hung up, timed out).
   */
  async retrieveThroughLeg(
    customerId: string,
    slot: number,
    callId: string,
    byCallId: string,
    answer: (near: CallEndpoint | null) => Promise<BridgeParty | null>,
  ): Promise<'retrieved' | 'empty' | 'gone'> {
    const p = this.byCall.get(callId);
    if (!p || p.rec.slot !== slot || p.rec.customer_id !== customerId || p.call.isEnded) return 'empty';
    // claimed while the leg is answered: a local retrieve, another leg or the timeout finds it taken
    if (!p.moves.claim()) return 'empty';
    const leg = await answer(p.call.endpoint).catch((err: Error) => {
      this.deps.logger.warn({ err: err.message, call: callId }, 'park: retrieving leg not answered');
      return null;
    });
    if (!leg || p.call.isEnded) {
      if (leg) await leg.hangup('park_gone');
      if (p.call.isEnded) return (await this.leave(p, 'hangup'), 'gone');
      // back where it was: parked (its timeout armed for what remains: at once if past), or rung back
      if (p.moves.unclaim() === 'ringback' && !p.ringback) await this.fallback(p);
      return 'gone';
    }
    await this.takeOver(p, leg, 'retrieved', byCallId);
    return 'retrieved';
  }

  /** The customer's parked calls (every node's). */
  list(customerId: string): Promise<ParkedCall[]> {
    return this.slots.list(customerId);
  }

  /** The parked call's slot on this node, by call id. */
  parkedCall(callId: string): ParkedCall | null {
    const p = this.byCall.get(callId);
    return p && p.moves.holding ? p.rec : null;
  }

  /** Rings `destination` and gives it the call parked in `slot` on answer (API retrieve). */
  async retrieveTo(customerId: string, slot: number, destination: Address): Promise<RetrieveOutcome> {
    const p = this.local(customerId, slot);
    if (!p) return (await this.slots.get(customerId, slot)) ? 'elsewhere' : 'empty';
    void this.ringInto(p, destination, 'retrieved').catch((err: Error) => this.deps.logger.warn({ err: err.message, call: p.call.id }, 'park retrieve failed'));
    return 'retrieved';
  }

  /** `taker` takes the holder's place; `by`: the call that took it (call_unparked `retrieved_by`). */
  private async takeOver(p: Parking, taker: BridgeParty, reason: UnparkReason, by: string): Promise<void> {
    if (!p.moves.move('taken', reason)) throw new Error('the call is not parked any more');
    // a ring-back still ringing (the slot was dialled meanwhile) is cancelled
    const ringing = p.ringback;
    p.ringback = null;
    if (ringing) void ringing.hangup().catch(() => undefined);
    await p.call.endpoint?.stopPlayback().catch(() => undefined);
    const bridge = p.call.bridge;
    if (!bridge) throw new Error('the parked call has no bridge');
    await bridge.replace(p.holder, taker);
    await p.holder.hangup(reason);
    await this.freeSlot(p, reason, { retrieved_by: by });
    this.deps.logger.info({ call: p.call.id, slot: p.rec.slot, by, reason }, 'parked call taken');
  }

  /** Rings `to` as a groupcall; its answer takes the parked call (unless it left meanwhile). Resolves with the answer. */
  private async ringInto(p: Parking, to: Address, reason: UnparkReason): Promise<CallSession | null> {
    const source = p.call.row.direction === 'incoming' ? p.call.row.source : p.call.row.destination;
    const { groupcall } = await createGroupcall(this.deps, { customerId: p.rec.customer_id, source, destinations: [to], ringMethod: 'ring_all', answerMethod: 'hangup_others' });
    const gc = this.runner.ring(groupcall);
    p.ringback = gc;
    const left = p.call.done.then(() => null);
    const answered = await Promise.race([gc.answered, left]);
    p.ringback = null;
    // taken, retrieving or gone meanwhile: this answer is not wanted
    if (!answered || !p.moves.holding || p.call.isEnded) {
      if (answered) await answered.hangup('park_gone');
      else await gc.hangup();
      return null;
    }
    await this.takeOver(p, answered, reason, answered.id);
    return answered;
  }

  /** The timeout: park_timeout, then the parker rung back; no answer (or no parker): the fallback. */
  private async timeout(p: Parking): Promise<void> {
    if (!p.moves.move('ringback', 'park timeout')) return;
    await this.publish('park_timeout', p.rec, {});
    const parker = p.rec.parker;
    this.deps.logger.info({ call: p.call.id, slot: p.rec.slot, ringback: parker?.target ?? null }, 'park timed out');
    const took = parker ? await this.ringInto(p, parker, 'ringback_answered') : null;
    if (!took) await this.fallback(p);
  }

  /** Nobody took the call rung back (or there was no parker): it is hung up (a retrieve in progress decides first). */
  private async fallback(p: Parking): Promise<void> {
    if (p.moves.state !== 'ringback' || !p.moves.move('fallback', 'nobody took it')) return;
    await this.freeSlot(p, 'timeout_fallback', {});
    await p.holder.hangup('timeout_fallback');
    await p.call.hangup('park_timeout');
  }

  private async leave(p: Parking, reason: UnparkReason): Promise<void> {
    if (p.moves.ended || !p.moves.move('left', reason)) return;
    await p.ringback?.hangup().catch(() => undefined);
    await p.holder.hangup(reason);
    await this.freeSlot(p, reason, {});
  }

  private async freeSlot(p: Parking, reason: UnparkReason, extra: Record<string, unknown>): Promise<void> {
    this.byCall.delete(p.call.id);
    if (await this.slots.release(p.rec.customer_id, p.rec.slot, p.call.id).catch(() => false)) this.changed(p.rec, 'free');
    await this.publish('call_unparked', p.rec, { reason, ...extra });
  }

  /**
   * The node's music on hold, looped to the parked call while it holds its slot. A stop of ours (a
   * take, the fallback, the call leaving) comes after the move out of the slot, so the loop ends at
   * its next check; a stop of another writer (the call's own media state) is played over at once;
   * stops that leave nothing played, again and again, wait for the call's next move instead of spinning.
   */
  private music(p: Parking): void {
    const holds = () => !p.moves.ended && !p.call.isEnded && !!p.call.endpoint;
    const loop = async () => {
      const file = await mohFile(this.deps.config.dataDir);
      let idle = 0;
      for (let ep = p.call.endpoint; ep && holds(); ep = p.call.endpoint) {
        const r = await ep.play(file);
        idle = r.interrupted && r.playbackMilliseconds === 0 ? idle + 1 : 0;
        if (idle >= MUSIC_IDLE_STOPS && holds()) {
          this.deps.logger.warn({ call: p.call.id, stops: idle }, 'park music stopped before it played: waiting for the next move');
          await Promise.race([p.moves.nextMove(), p.call.done]);
          idle = 0;
        }
      }
    };
    loop().catch((err: Error) => {
      if (holds()) this.deps.logger.warn({ err: err.message, call: p.call.id }, 'park music stopped');
    });
  }

  private changed(rec: ParkedCall, state: SlotState): void {
    this.slotState.emit('change', rec.customer_id, rec.slot, state, rec);
  }

  private async publish(type: Extract<EventType, 'call_parked' | 'call_unparked' | 'park_timeout'>, rec: ParkedCall, extra: Record<string, unknown>): Promise<void> {
    await publishResourceEvent(this.deps.events, type, { id: rec.call_id, ...rec, ...extra }).catch((err: Error) =>
      this.deps.logger.warn({ err: err.message, call: rec.call_id }, `${type} not published`),
    );
  }

  async stop(): Promise<void> {
    for (const p of this.byCall.values()) p.moves.cancelAll();
  }
}
