/**
 * One class per action type (as jambonz's feature server has one task class per verb): the
 * constructor receives the action and its option with `${var}` already substituted; exec() does the
 * work and says where the flow goes next. Cancellation comes through ctx.signal (stop, hangup).
 */
import type { Action } from '../../../core/flow';
import type { CallPort, Originator } from '../call-port';
import type { FlowClock } from '../../kit/clock';
import type { FlowHttp } from '../../kit/http';
import type { FlowLimits } from '../limits';
import type { FlowServices } from '../services';
import type { ReferenceType } from '../record';
import type { FlowStore } from '../stores';
import type { Variables } from '../variables';

export type Outcome =
  /** The next action: next_id when set, else the next element. */
  | { kind: 'next' }
  /** Jump to an action id (current list first, then the lists below it). */
  | { kind: 'jump'; target_id: string }
  /** Run these actions next, then come back (fetch, fetch_flow). */
  | { kind: 'push'; actions: Action[] }
  /** Run a compiled TwiML document: pushed from the flow's own list, replacing the rest of a document run from one (media-app/flow/actions/twiml.ts). */
  | { kind: 'twiml'; actions: Action[] }
  /** End the activeflow. */
  | { kind: 'end'; reason: 'stop_action' | 'call_hangup' }
  /** End the activeflow with an error. */
  | { kind: 'fail'; message: string };

export const NEXT: Outcome = { kind: 'next' };

export interface ActionContext {
  readonly activeflowId: string;
  readonly customerId: string;
  readonly referenceType: ReferenceType;
  readonly referenceId: string;
  /** The live call, undefined when the activeflow has none or it hung up. */
  readonly call: CallPort | undefined;
  readonly originator: Originator | undefined;
  readonly vars: Variables;
  readonly clock: FlowClock;
  readonly http: FlowHttp;
  readonly flows: FlowStore;
  readonly limits: FlowLimits;
  /** The node's subsystems (conferences, queues, media streams, AI...); each member may be absent. */
  readonly services: FlowServices;
  /** Aborts when the activeflow is stopped or its call hangs up. */
  readonly signal: AbortSignal;
  /** Takes one pass of a goto loop; false when its loop_count is used up (stored per action list). */
  takeLoop(actionId: string, loopCount: number): boolean;
  /** Resolves on the external continue request (block). */
  waitContinue(): Promise<void>;
  /** Work that outlives the action (async webhook, async amd, async talk); failures are noted, not fatal. */
  background(what: string, work: Promise<unknown>): void;
  /** While true, DTMF belongs to the running digits_receive rather than overwriting svc.call.digits. */
  setCollectingDigits(on: boolean): void;
  /** Starts flow onEndFlowId (reference recording) when that recording ends (recording_start on_end_flow_id). */
  onRecordingEnded(recordingId: string, onEndFlowId: string): void;
  /** Adds an entry to the activeflow's trace (simulator timeline, logs). */
  note(event: string, data?: Record<string, unknown>): void;
}

export abstract class FlowTask<O = Record<string, unknown>> {
  constructor(
    readonly action: Action,
    /** Option after substitution. */
    readonly option: O,
    /** Option as written in the flow (branch and condition_variable read variable names from it). */
    readonly rawOption: Record<string, unknown>,
  ) {}

  get name(): string {
    return this.action.type;
  }

  abstract exec(ctx: ActionContext): Promise<Outcome>;
}

/** Media actions need the call; the runner skips them when there is none (voipbin verifyActionType). */
export function requireCall(ctx: ActionContext): CallPort {
  if (!ctx.call) throw new Error('no call');
  return ctx.call;
}

/** Each action's class takes its own option type: `never` here admits them all (the registry casts the parsed option to it). */
export type FlowTaskClass = new (action: Action, option: never, rawOption: Record<string, unknown>) => FlowTask<unknown>;
