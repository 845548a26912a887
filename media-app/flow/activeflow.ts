/**
 * One activeflow: runs its actions in order on one call (or none), owns its variables, its action
 * stack, its record and its events, and ends exactly once. Stop from outside at any point aborts
 * the running action through the shared signal.
 */
import { type Action, ACTION_SPECS, EMPTY_UUID, isUnset, substituteOption } from '../../core/flow';
import type { ActionContext, Outcome } from './actions/base';
import { makeTask } from './actions';
import type { CallPort, CallStatus, HangupInfo, Originator } from './call-port';
import { abortError, onceAborted, type FlowClock } from '../kit/clock';
import type { ActiveflowEmitter, ActiveflowEventType } from './events';
import { Frame } from './frame';
import type { FlowHttp } from '../kit/http';
import type { FlowLimits } from './limits';
import type { FlowServices } from './services';
import { type ActiveflowRecord, type EndReason, type ExecutedAction, type ReferenceType, tm } from './record';
import type { ActiveflowStore, FlowStore } from './stores';
import { Variables } from './variables';
import { failSpan, startSpan, withActive, type Span } from '../../core/tracing';

export interface TraceEntry {
  at: number;
  activeflow_id: string;
  event: string;
  [key: string]: unknown;
}

export interface SessionDeps {
  store: ActiveflowStore;
  emitter: ActiveflowEmitter;
  flows: FlowStore;
  clock: FlowClock;
  http: FlowHttp;
  limits: FlowLimits;
  /** Everything that happens, in order (the simulator's timeline; logs in production). */
  trace?: (entry: TraceEntry) => void;
  /** Subsystems beyond the call (conferences, queues, streams, AI); shared by every activeflow of a node. */
  services?: FlowServices;
  /** Starts the flow of a recording's on_end_flow_id (the manager provides it). */
  spawnForRecording?: (parent: ActiveflowSession, recordingId: string, flowId: string) => void;
}

export interface SessionInit {
  id: string;
  customer_id: string;
  flow_id: string;
  actions: Action[];
  reference_type: ReferenceType;
  reference_id: string;
  reference_activeflow_id: string;
  on_complete_flow_id: string;
  webhook_uri: string;
  webhook_method: ActiveflowRecord['webhook_method'];
  variables: Record<string, string>;
  complete_count: number;
  call?: CallPort;
  originator?: Originator;
  /** The record already exists (control-api wrote it for POST /activeflows): update it, do not insert. */
  adopt?: boolean;
}

export class ActiveflowSession {
  readonly id: string;
  readonly vars: Variables;
  /** Resolves with the final record once the activeflow has ended. */
  readonly done: Promise<ActiveflowRecord>;

  private readonly frames: Frame[];
  private readonly abort = new AbortController();
  /** The running action's signal: the activeflow's, or a redirect's (which interrupts only the action). */
  private actionSignal: AbortSignal = this.abort.signal;
  private actionAbort: AbortController | null = null;
  /** Actions a redirect put in place of the rest of the activeflow, taken after the running action. */
  private redirected: Action[] | null = null;
  private abortCause: 'stopped' | 'call_hangup' | null = null;
  private readonly executed: ExecutedAction[] = [];
  private current: Action | null = null;
  /** This activeflow's span (a child of the call's, core/tracing); its actions' spans are its children. */
  private span: Span | null = null;
  private status: 'running' | 'ended' | '' = '';
  private endReason: EndReason = '';
  private error = '';
  private collecting = false;
  private continueWaiter: { resolve: () => void; reject: (e: Error) => void } | null = null;
  private callGone = false;
  private tmCreate = '';
  private tmUpdate = '';
  private resolveDone!: (r: ActiveflowRecord) => void;
  private readonly ctx: ActionContext;

  constructor(
    private readonly init: SessionInit,
    private readonly deps: SessionDeps,
  ) {
    this.id = init.id;
    this.frames = [new Frame(init.actions)];
    this.vars = new Variables(init.variables);
    this.done = new Promise((r) => (this.resolveDone = r));
    this.ctx = this.makeContext();
  }

  get call(): CallPort | undefined {
    return this.init.call;
  }

  /** The call, while it is up. */
  get liveCall(): CallPort | undefined {
    return this.callGone ? undefined : this.init.call;
  }

  get ended(): boolean {
    return this.status === 'ended';
  }

  get customerId(): string {
    return this.init.customer_id;
  }

  /** Persists the record, emits activeflow_created and starts running (without waiting for the end). */
  async start(): Promise<ActiveflowRecord> {
    const now = tm(this.deps.clock.now());
    this.tmCreate = now;
    this.tmUpdate = now;
    this.status = 'running';
    this.setSystemVariables();
    const call = this.init.call;
    if (call) {
      call.on('dtmf', this.onDtmf);
      call.on('hangup', this.onHangup);
      call.on('status', this.onStatus);
      if (call.info.status === 'hangup') this.callGone = true;
    }
    const rec = this.record();
    if (this.init.adopt) await this.deps.store.update(rec);
    else await this.deps.store.create(rec);
    this.deps.emitter.publish('activeflow_created', rec);
    this.trace('activeflow_created', { flow_id: this.init.flow_id, reference_type: this.init.reference_type });
    const span = (this.span = startSpan('activeflow', { attributes: { 'openvoice.activeflow.id': this.id, 'openvoice.activeflow.reference_type': this.init.reference_type } }));
    void withActive(span, () => this.run());
    return rec;
  }

  /** Stops the activeflow (idempotent): aborts the running action and resolves with the final record. */
  stop(): Promise<ActiveflowRecord> {
    if (this.status === 'running' && !this.abort.signal.aborted) {
      this.abortCause = 'stopped';
      this.abort.abort(flowAbort('activeflow stopped'));
    }
    return this.done;
  }

  /**
   * Twilio's live call update (activeflow.redirect, <Redirect> from outside): interrupts the running
   * action and runs `actions` (validated) in place of the rest of the activeflow. False when ended.
   */
  redirect(actions: Action[]): boolean {
    if (this.status !== 'running' || this.abort.signal.aborted) return false;
    this.redirected = actions;
    this.actionAbort?.abort(flowAbort('activeflow redirected'));
    return true;
  }

  /** The external continue of a block action; false when nothing is blocked. */
  continue(): boolean {
    const w = this.continueWaiter;
    if (!w) return false;
    this.continueWaiter = null;
    w.resolve();
    return true;
  }

  record(): ActiveflowRecord {
    const i = this.init;
    return {
      id: i.id,
      customer_id: i.customer_id,
      flow_id: i.flow_id,
      status: this.status,
      reference_type: i.reference_type,
      reference_id: i.reference_id,
      reference_activeflow_id: i.reference_activeflow_id,
      on_complete_flow_id: i.on_complete_flow_id,
      webhook_uri: i.webhook_uri,
      webhook_method: i.webhook_method,
      current_action: this.current,
      forward_action_id: EMPTY_UUID,
      executed_actions: this.executed,
      variables: this.vars.snapshot(),
      complete_count: i.complete_count,
      end_reason: this.endReason,
      error: this.error,
      tm_create: this.tmCreate,
      tm_update: this.tmUpdate,
      tm_delete: null,
    };
  }

  private async run(): Promise<void> {
    const { clock, limits } = this.deps;
    const signal = this.abort.signal;
    try {
      for (;;) {
        if (signal.aborted) break;
        const frame = this.topFrame();
        if (!frame) {
          this.finish('finished');
          break;
        }
        if (this.executed.length >= limits.maxExecutedActions) {
          this.finish('limit', `executed action limit reached (${limits.maxExecutedActions})`);
          break;
        }
        if (this.takeRedirect()) continue;
        const index = frame.pos;
        const action = frame.actions[index]!;
        const option = frame.twiml && !isTwimlParam(action) ? action.option : substituteOption(action.type, action.option, this.vars.lookup);
        const executed: ExecutedAction = { ...action, option, tm_execute: tm(clock.now()) };
        this.executed.push(executed);
        this.current = executed;
        await this.persist('activeflow_updated');
        this.trace('action', { action_id: action.id, type: action.type, option, depth: this.frames.length - 1, index });
        // a redirect that came while the action was being recorded: it has no abort to hit yet, so the action does not start
        if (this.takeRedirect()) continue;

        let outcome: Outcome;
        this.actionAbort = new AbortController();
        this.actionSignal = AbortSignal.any([signal, this.actionAbort.signal]);
        if (ACTION_SPECS[action.type].needsCall && !this.liveCall) {
          this.trace('action_skipped', { action_id: action.id, type: action.type, why: 'no call' });
          outcome = { kind: 'next' };
        } else {
          const span = startSpan(`action ${action.type}`, { attributes: { 'openvoice.action.id': action.id, 'openvoice.action.type': action.type, 'openvoice.action.depth': this.frames.length - 1 } });
          try {
            outcome = await withActive(span, () => makeTask(action, option).exec(this.ctx));
          } catch (e) {
            outcome = { kind: 'fail', message: `action ${action.type} (${action.id}) failed: ${(e as Error).message}` };
            if (signal.aborted) {
              span.setAttribute('openvoice.action.outcome', 'aborted');
              span.end();
              break;
            }
          }
          span.setAttribute('openvoice.action.outcome', this.redirected ? 'redirected' : outcome.kind);
          // the failure's text may carry customer input (a URL with its token): the span says which action failed, the activeflow's record says why
          if (outcome.kind === 'fail' && !this.redirected) failSpan(span, `action ${action.type} failed`);
          span.end();
        }
        this.actionAbort = null;
        this.actionSignal = signal;
        if (signal.aborted) break;
        if (this.takeRedirect()) continue;
        if (!this.apply(frame, index, action, outcome)) break;
      }
    } catch (e) {
      if (!signal.aborted) this.finish('error', `runner failure: ${(e as Error).message}`);
    }
    if (this.status !== 'ended') this.finish(this.abortCause ?? 'stopped');
    await this.persist('activeflow_updated');
    this.trace('activeflow_ended', { end_reason: this.endReason, error: this.error });
    this.span?.setAttribute('openvoice.activeflow.end_reason', this.endReason ?? '');
    this.span?.end();
    this.detach();
    this.resolveDone(this.record());
  }

  /** Moves the stack on after an action; false when the activeflow ends. */
  private apply(frame: Frame, index: number, action: Action, outcome: Outcome): boolean {
    switch (outcome.kind) {
      case 'next':
        return isUnset(action.next_id) ? ((frame.pos = index + 1), true) : this.jump(action.next_id);
      case 'jump':
        return this.jump(outcome.target_id);
      case 'push': {
        if (!(isUnset(action.next_id) ? ((frame.pos = index + 1), true) : this.jump(action.next_id))) return false;
        if (this.frames.length >= this.deps.limits.maxStackDepth) {
          this.finish('limit', `action list depth limit reached (${this.deps.limits.maxStackDepth})`);
          return false;
        }
        this.frames.push(new Frame(outcome.actions));
        return true;
      }
      case 'twiml': {
        // A document run from a document replaces it (and what it pushed); else it is pushed like fetch.
        const k = this.frames.lastIndexOf(frame);
        if (frame.twiml) this.frames.length = k;
        else if (!(isUnset(action.next_id) ? ((frame.pos = index + 1), true) : this.jump(action.next_id))) return false;
        if (this.frames.length >= this.deps.limits.maxStackDepth) {
          this.finish('limit', `action list depth limit reached (${this.deps.limits.maxStackDepth})`);
          return false;
        }
        this.frames.push(new Frame(outcome.actions, true));
        return true;
      }
      case 'end':
        this.finish(outcome.reason);
        return false;
      case 'fail':
        this.finish('error', outcome.message);
        return false;
    }
  }

  /** Jumps to an action id: the current list first, then the lists below it (which resume). */
  private jump(id: string): boolean {
    for (let k = this.frames.length - 1; k >= 0; k--) {
      const idx = this.frames[k]!.byId.get(id);
      if (idx === undefined) continue;
      this.frames.length = k + 1;
      this.frames[k]!.pos = idx;
      return true;
    }
    this.finish('error', `target action ${id} not found`);
    return false;
  }

  /** Puts a pending redirect's actions in place of every list; true when there was one. */
  private takeRedirect(): boolean {
    const actions = this.redirected;
    if (!actions) return false;
    this.redirected = null;
    this.frames.length = 0;
    this.frames.push(new Frame(actions));
    this.trace('activeflow_redirected', { actions: actions.length });
    return true;
  }

  private topFrame(): Frame | undefined {
    while (this.frames.length > 0) {
      const f = this.frames[this.frames.length - 1]!;
      if (f.pos < f.actions.length) return f;
      this.frames.pop();
    }
    return undefined;
  }

  private finish(reason: EndReason, error = ''): void {
    if (this.status === 'ended') return;
    this.status = 'ended';
    this.endReason = reason;
    this.error = error;
    const w = this.continueWaiter;
    this.continueWaiter = null;
    w?.reject(flowAbort('activeflow ended'));
  }

  private async persist(type: ActiveflowEventType): Promise<void> {
    this.tmUpdate = tm(this.deps.clock.now());
    const rec = this.record();
    await this.deps.store.update(rec);
    this.deps.emitter.publish(type, rec);
  }

  private trace(event: string, data: Record<string, unknown> = {}): void {
    this.deps.trace?.({ at: this.deps.clock.now(), activeflow_id: this.id, event, ...data });
  }

  private setSystemVariables(): void {
    const v = this.vars;
    const i = this.init;
    v.set('svc.activeflow.id', i.id);
    v.set('svc.activeflow.flow_id', i.flow_id);
    v.set('svc.activeflow.reference_type', i.reference_type);
    v.set('svc.activeflow.reference_id', i.reference_id);
    v.set('svc.activeflow.reference_activeflow_id', i.reference_activeflow_id);
    v.set('svc.activeflow.complete_count', String(i.complete_count));
    if (i.call) v.setCall(i.call.info);
  }

  private readonly onDtmf = (digit: string): void => {
    this.trace('dtmf', { digit });
    // A key pressed outside digits_receive replaces the held digits; the next digits_receive starts from it.
    if (!this.collecting && this.status === 'running') this.vars.set('svc.call.digits', digit);
  };

  private readonly onStatus = (status: CallStatus): void => {
    this.vars.set('svc.call.status', status);
  };

  private readonly onHangup = (info: HangupInfo): void => {
    this.callGone = true;
    this.vars.set('svc.call.status', 'hangup');
    this.vars.set('svc.call.hangup_reason', info.reason);
    this.trace('call_hangup', { reason: info.reason, by: info.by });
    if (this.status === 'running' && !this.abort.signal.aborted) {
      this.abortCause = 'call_hangup';
      this.abort.abort(flowAbort('call hung up'));
    }
  };

  private detach(): void {
    const call = this.init.call;
    if (!call) return;
    call.off('dtmf', this.onDtmf);
    call.off('hangup', this.onHangup);
    call.off('status', this.onStatus);
  }

  private makeContext(): ActionContext {
    const liveCall = () => this.liveCall; // the context's getter below reads it: `this` there is the context
    const actionSignal = () => this.actionSignal;
    const d = this.deps;
    const clock = d.clock;
    return {
      activeflowId: this.init.id,
      customerId: this.init.customer_id,
      referenceType: this.init.reference_type,
      referenceId: this.init.reference_id,
      get call() {
        return liveCall();
      },
      originator: this.init.originator ?? this.init.call,
      vars: this.vars,
      clock,
      // Real I/O is tracked so a virtual clock waits for it.
      http: { request: (req) => clock.track(d.http.request(req)) },
      flows: d.flows,
      limits: d.limits,
      services: d.services ?? {},
      get signal() {
        return actionSignal();
      },
      takeLoop: (actionId, loopCount) => {
        const frame = this.frames[this.frames.length - 1]!;
        const left = frame.loops.get(actionId) ?? loopCount;
        if (left <= 0) {
          frame.loops.set(actionId, 0);
          return false;
        }
        frame.loops.set(actionId, left - 1);
        return true;
      },
      waitContinue: () => {
        return new Promise<void>((resolve, reject) => {
          const sig = this.actionSignal;
          if (sig.aborted) return reject(abortError(sig));
          const off = onceAborted(sig, () => reject(abortError(sig)));
          this.continueWaiter = { resolve: () => (off(), resolve()), reject: (e) => (off(), reject(e)) };
        });
      },
      background: (what, work) => {
        // Not tracked here: HTTP is tracked where it is made, and media waits on the clock itself.
        work.catch((e: Error) => this.trace('background_failed', { what, error: e.message }));
      },
      setCollectingDigits: (on) => {
        this.collecting = on;
      },
      onRecordingEnded: (recordingId, flowId) => {
        const call = this.init.call;
        if (!call || !d.spawnForRecording) return;
        const listener = (ev: { recording_id: string }) => {
          if (ev.recording_id !== recordingId) return;
          call.off('recording_ended', listener);
          d.spawnForRecording!(this, recordingId, flowId);
        };
        call.on('recording_ended', listener);
      },
      note: (event, data) => {
        this.trace(event, data);
      },
    };
  }
}

/** The abort reason used for stop and hangup. */
export function flowAbort(message: string): Error {
  const e = new Error(message);
  e.name = 'FlowAbort';
  return e;
}

/**
 * A compiled TwiML document's text is literal (a `${` in a <Say> is spoken as written, as on Twilio):
 * only the compiler's own twiml.* variable_set actions (callback parameters) take substitution.
 */
function isTwimlParam(action: Action): boolean {
  return action.type === 'variable_set' && typeof action.option.key === 'string' && action.option.key.startsWith('twiml.');
}
