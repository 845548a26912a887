/**
 * The state of one call: one field (the Call row's status, the spec's call statuses) and one
 * transition function, `move`. A move is checked against the table of allowed moves
 * (core/calls/model CALL_MOVES), then written as a guarded UPDATE (`WHERE status = <the status this
 * owner holds>`), then published once. A refused move writes nothing and publishes nothing.
 *
 *   dialing ──► ringing ──► progressing ──► terminating ──► hangup
 *      │           │  └──────────┐  └────────────────────────►│
 *      │           └──► canceling ─────────────────────────►│
 *      └──► progressing / terminating / canceling / hangup
 *
 * Moves run one at a time, in the order asked: each is checked against the state the move before it
 * left, so a 180 and a 200 arriving together land as ringing then progressing, never as a lost write.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { canTransition, type CallStatus, type HangupCause } from '../../core/calls/model';
import type { Knex } from '../../core/db/knex';
import { retryWrite } from '../../core/db/retry';
import type { EventPublisher } from '../../core/events/bus';
import { callsRepo, type CallRow, type HangupStep } from '../../core/repos/calls';
import { publishCall } from './events';

/** What the state machine needs from its node. */
export interface CallStateDeps {
  db: Knex;
  events: EventPublisher;
  logger: Logger;
}

export interface CallStateEvents {
  /** The row moved (written and published). */
  stateChange: [to: CallStatus, from: CallStatus];
}

/** Which flow runs the call: its two fields of the row. */
export type CallFlow = Pick<CallRow, 'activeflow_id' | 'flow_id'>;

/** A status a call can be moved to (dialing is where every call starts). */
export type CallMove = Exclude<CallStatus, 'dialing'>;

export class CallState extends EventEmitter<CallStateEvents> {
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * The call's flow as this node knows it. media-app alone writes it (runFlow), and sets it here before
   * the flow starts: every status write carries it (a flow whose first action answers the call is named
   * by the answer's row and events), and no row read back from a write undoes it.
   */
  private flow: CallFlow | null = null;

  constructor(
    private current: CallRow,
    private readonly deps: CallStateDeps,
  ) {
    super();
  }

  get row(): CallRow {
    return this.current;
  }

  get state(): CallStatus {
    return this.current.status;
  }

  /** A write outside the status (activeflow, mute) hands back the row it wrote. */
  patch(fields: Partial<Omit<CallRow, 'status'>>): void {
    this.current = { ...this.current, ...fields };
  }

  /** The call's flow from now on: held here, carried by the next status writes (see `flow`). */
  setFlow(flow: CallFlow): void {
    this.flow = flow;
    this.current = { ...this.current, ...flow };
  }

  /** Whether `to` is an allowed move from the current state (before any queued move runs). */
  allows(to: CallMove): boolean {
    return canTransition(this.state, to);
  }

  /**
   * The one transition function. Resolves true when the row moved (it was written, then published
   * once); false when the move is refused by the table or the row was no longer in the status this
   * owner held (it is re-read). Rejects when the write failed for good.
   * `cause` says why a call ends (hangup only): hangup_reason and hangup_by derive from it; `steps`
   * run in the hangup's transaction when this move ended the row (the close's billing step).
   */
  move(to: CallMove, cause: HangupCause = 'normal_clearing', steps: readonly HangupStep[] = []): Promise<boolean> {
    const run = this.queue.then(() => this.apply(to, cause, steps));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async apply(to: CallMove, cause: HangupCause, steps: readonly HangupStep[]): Promise<boolean> {
    const from = this.state;
    if (!canTransition(from, to)) {
      this.deps.logger.debug({ call: this.current.id, from, to }, 'call move refused');
      return false;
    }
    const repo = callsRepo(this.deps.db);
    const id = this.current.id;
    // retried through a short database outage (core/db/retry.ts): the write is guarded, so repeating it is safe
    const flow = this.flow ?? {};
    const t = await retryWrite(this.deps.logger, `call ${id} ${to}`, () => (to === 'hangup' ? repo.hangup(id, cause, steps, flow) : repo.transitionFrom(id, from, to, flow)));
    if (t.call) this.current = this.flow ? { ...t.call, ...this.flow } : t.call;
    if (!t.changed) return false;
    await publishCall(this.deps.events, `call_${to}`, this.current, this.deps.logger);
    this.emit('stateChange', to, from);
    return true;
  }
}
