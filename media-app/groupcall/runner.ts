/**
 * Rings a groupcall on this node. Its Call rows exist already (control-api, or a transfer) with
 * groupcall_id set and status dialing. ring_all originates them all at once; linear one at a time,
 * the next after a failure. The first answer is recorded once (claimAnswer); with answer_method
 * hangup_others the rest are cancelled (never-dialled linear rows are ended in place). The groupcall
 * ends (hangup) when none of its calls is live any more. Its own state (ringing, answered, stopping,
 * ended) moves through ring-moves.ts (GROUPCALL_RING_MOVES, one guarded move).
 */
import { EventEmitter } from 'node:events';
import { callsRepo } from '../../core/repos/calls';
import { chargeEndedCall } from '../../core/billing/call-end';
import { publishCall } from '../call/events';
import { groupcallJson, groupcallsRepo, type GroupcallRow } from '../../core/repos/groupcalls';
import { publishResourceEvent } from '../../core/events/catalogue';
import { effectiveRingMethod } from '../../core/groupcalls/model';
import { groupcallClaimKey } from '../../core/groupcalls/commands';
import type { CallFactory } from '../call/factory';
import type { CallSession } from '../call/session';
import type { Moves } from '../call/move-table';
import { ringMoves, type RingState } from './ring-moves';

export interface RunningGroupcall extends EventEmitter {
  readonly id: string;
  /** The first call that answered, or null when none did (resolves when that is known). */
  readonly answered: Promise<CallSession | null>;
  /** Resolves when the groupcall is hangup. */
  readonly ended: Promise<void>;
  /** Cancels the ringing calls and hangs up an answered one (with this Reason header on its BYE, RFC 3326). */
  hangup(reasonHeader?: string): Promise<void>;
}

export class GroupcallRunner {
  private readonly live = new Map<string, RunningGroupcall>();

  constructor(private readonly factory: CallFactory) {}

  private get deps() {
    return this.factory.deps;
  }

  get(id: string): RunningGroupcall | undefined {
    return this.live.get(id);
  }

  /** The groupcall.start command: claim once across nodes, then ring. */
  async startCommand(groupcallId: string): Promise<void> {
    const key = this.deps.config.redisKeyPrefix + groupcallClaimKey(groupcallId);
    const claimed = await this.deps.redis.set(key, this.deps.calls.nodeId, 'EX', 86_400, 'NX');
    if (claimed !== 'OK') return;
    const row = await groupcallsRepo(this.deps.db).get(groupcallId);
    if (!row || row.status !== 'progressing') return;
    this.ring(row);
  }

  /** Rings a groupcall row this node already owns (a claim is the caller's business). */
  ring(row: GroupcallRow): RunningGroupcall {
    const existing = this.live.get(row.id);
    if (existing) return existing;
    const gc = new Ringing(row, this.factory, () => this.live.delete(row.id));
    this.live.set(row.id, gc);
    void gc.run();
    return gc;
  }

  async hangupAll(): Promise<void> {
    await Promise.allSettled([...this.live.values()].map((g) => g.hangup()));
  }
}

class Ringing extends EventEmitter implements RunningGroupcall {
  readonly answered: Promise<CallSession | null>;
  readonly ended: Promise<void>;
  private resolveAnswered!: (c: CallSession | null) => void;
  private resolveEnded!: () => void;
  private readonly calls = new Map<string, CallSession>();
  private winner: CallSession | null = null;
  private readonly moves: Moves<RingState, never>;
  /** The Reason header of the BYEs a hangup() sends, when its caller gave one. */
  private reasonHeader: string | undefined;

  constructor(
    private row: GroupcallRow,
    private readonly factory: CallFactory,
    private readonly onEnd: () => void,
  ) {
    super();
    this.answered = new Promise((r) => (this.resolveAnswered = r));
    this.ended = new Promise((r) => (this.resolveEnded = r));
    this.moves = ringMoves(row.id, factory.deps.logger);
    this.on('error', () => undefined);
  }

  get id(): string {
    return this.row.id;
  }

  private get deps() {
    return this.factory.deps;
  }

  private get repo() {
    return groupcallsRepo(this.deps.db);
  }

  private async publish(type: 'groupcall_progressing' | 'groupcall_hangup', row: GroupcallRow | null): Promise<void> {
    if (!row) return;
    this.row = row;
    await publishResourceEvent(this.deps.events, type, groupcallJson(row) as never).catch(() => undefined);
  }

  async run(): Promise<void> {
    try {
      await this.repo.update(this.id, { node_id: this.deps.calls.nodeId, call_count: this.row.call_ids.length });
      if (effectiveRingMethod(this.row.ring_method) === 'ring_all') {
        await Promise.all(this.row.call_ids.map((id) => this.dialOne(id)));
      } else {
        for (const [i, id] of this.row.call_ids.entries()) {
          if (this.moves.state !== 'ringing') break;
          await this.repo.update(this.id, { dial_index: i });
          const call = await this.dialOne(id);
          if (!call) continue;
          // the next destination is tried only once this one has failed
          const up = await Promise.race([this.upOrDown(call), call.done.then(() => false)]);
          if (up) break;
        }
      }
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message, groupcall: this.id }, 'groupcall ringing failed');
    }
    await this.settleIfDone();
  }

  /** True when the call answered, false when it ended first. */
  private upOrDown(call: CallSession): Promise<boolean> {
    if (call.status === 'progressing') return Promise.resolve(true);
    return new Promise((resolve) => {
      const onStatus = (s: string) => s === 'progressing' && (call.off('status', onStatus), resolve(true));
      call.on('status', onStatus);
      void call.done.then(() => (call.off('status', onStatus), resolve(false)));
    });
  }

  private async dialOne(callId: string): Promise<CallSession | null> {
    if (this.moves.state !== 'ringing') return null;
    await this.factory.originate([callId]);
    const call = this.factory.get(callId);
    if (!call) {
      // not dialled (gone, or ended before its turn)
      await this.settleIfDone();
      return null;
    }
    this.calls.set(callId, call);
    // the answer's handling is the call's own work: if it fails, the call ends with a reason
    call.on('status', (s: string) => {
      if (s === 'progressing') call.own(this.onAnswer(call), 'the groupcall answer');
    });
    call.done.then(() => this.onCallEnded()).catch((err: Error) => this.deps.logger.warn({ err: err.message, groupcall: this.id }, 'groupcall bookkeeping after a call ended failed'));
    if (call.status === 'progressing') call.own(this.onAnswer(call), 'the groupcall answer');
    return call;
  }

  private async onAnswer(call: CallSession): Promise<void> {
    if (this.winner === call) return;
    // a second answer after the first, or one after a hangup was asked: this one is not wanted
    if (this.moves.state !== 'ringing' || !(await this.repo.claimAnswer(this.id, call.id)) || !this.moves.move('answered', `call ${call.id} answered`)) {
      await this.drop(call);
      return;
    }
    this.winner = call;
    await this.publish('groupcall_progressing', await this.repo.get(this.id));
    this.resolveAnswered(call);
    this.emit('answered', call);
    if (this.row.answer_method === 'hangup_others' || this.row.answer_method === '') await this.hangupOthers(call);
  }

  private async hangupOthers(keep: CallSession | null): Promise<void> {
    await Promise.all([...this.calls.values()].filter((c) => c !== keep).map((c) => this.drop(c)));
    // linear rows never dialled end where they are (dialing → canceling → hangup: reason cancel)
    const calls = callsRepo(this.deps.db);
    for (const id of this.row.call_ids) {
      if (this.calls.has(id)) continue;
      const row = await calls.get(id);
      if (!row || row.status !== 'dialing' || this.factory.get(id)) continue;
      await this.deps.redis.set(`${this.deps.config.redisKeyPrefix}originate-claim:${id}`, this.deps.calls.nodeId, 'EX', 86_400, 'NX');
      const c = await calls.transition(id, 'canceling');
      if (c.changed && c.call) await publishCall(this.deps.events, 'call_canceling', c.call, this.deps.logger);
      const t = await calls.hangup(id, 'normal_clearing', [chargeEndedCall]);
      if (t.changed && t.call) {
        await publishCall(this.deps.events, 'call_hangup', t.call, this.deps.logger);
      }
    }
  }

  private drop(call: CallSession): Promise<unknown> {
    if (!this.reasonHeader) return call.hangup('normal');
    return call.close({ cause: 'normal_clearing', by: 'local', why: 'normal', announce: true, reasonHeader: this.reasonHeader });
  }

  private async onCallEnded(): Promise<void> {
    const left = [...this.calls.values()].filter((c) => !c.isEnded).length;
    await this.repo.update(this.id, { call_count: left }).catch(() => undefined);
    await this.settleIfDone();
  }

  /** Hangup once no call is live and no more will be dialled. */
  private async settleIfDone(): Promise<void> {
    if (this.moves.ended) return;
    const anyLive = [...this.calls.values()].some((c) => !c.isEnded);
    if (anyLive) return;
    if (this.moves.state === 'ringing') {
      // rows still waiting for their turn (linear) or their originate (ring_all): not over yet
      const rows = await Promise.all(this.row.call_ids.map((id) => callsRepo(this.deps.db).get(id)));
      if (rows.some((r) => r && r.status !== 'hangup')) return;
    }
    if (this.moves.ended || !this.moves.move('ended', 'no call is live')) return;
    if (!this.winner) this.resolveAnswered(null);
    await this.hangupOthers(null).catch(() => undefined);
    const t = await this.repo.transition(this.id, 'hangup');
    if (t.changed) await this.publish('groupcall_hangup', t.row);
    this.onEnd();
    this.emit('hangup');
    this.resolveEnded();
  }

  async hangup(reasonHeader?: string): Promise<void> {
    if (this.moves.ended) return this.ended;
    if (this.moves.state !== 'stopping') this.moves.move('stopping', 'hangup asked');
    this.reasonHeader ??= reasonHeader;
    const t = await this.repo.transition(this.id, 'hangingup');
    if (t.row) this.row = t.row;
    await this.hangupOthers(null);
    await this.settleIfDone();
    return this.ended;
  }
}
