/**
 * Starts, finds, stops and continues activeflows, and runs what follows one: the on_complete_flow_id
 * chain (bounded), the flow of a recording's on_end_flow_id, and the hangup of a call whose flow has
 * nothing left to do.
 */
import { randomUUID } from 'node:crypto';
import { type Action, EMPTY_UUID, type FlowDefinition, isUnset } from '../../core/flow';
import { ApiError } from '../../core/errors';
import { ActiveflowSession, type SessionDeps, type TraceEntry } from './activeflow';
import type { CallPort, Originator } from './call-port';
import type { ActiveflowRecord, ReferenceType } from './record';

export interface StartRequest {
  id?: string;
  customer_id: string;
  /** Run this stored flow... */
  flow_id?: string;
  /** ...already read with what named it (an inbound number's): used when it is flow_id's, else flow_id is read */
  flow?: FlowDefinition | null;
  /** ...or these actions (already validated). */
  actions?: Action[];
  reference_type: ReferenceType;
  reference_id?: string;
  reference_activeflow_id?: string;
  /** Overrides the flow's own on_complete_flow_id. */
  on_complete_flow_id?: string;
  variables?: Record<string, string>;
  webhook_uri?: string;
  webhook_method?: ActiveflowRecord['webhook_method'];
  complete_count?: number;
  call?: CallPort;
  originator?: Originator;
  /** The record exists already (written by control-api): the session updates it. */
  adopt?: boolean;
}

export interface ManagerOptions {
  /** Hang up the call when its flow (and chain) ends without doing so. Default true (voipbin). */
  hangupOnEnd?: boolean;
}

const CHAIN_REASONS = new Set(['finished', 'stop_action', 'call_hangup']);

export class ActiveflowManager {
  private readonly live = new Map<string, ActiveflowSession>();
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly deps: SessionDeps,
    private readonly opts: ManagerOptions = {},
  ) {
    deps.spawnForRecording ??= (parent, recordingId, flowId) => {
      this.follow(
        this.start({
          customer_id: parent.customerId,
          flow_id: flowId,
          reference_type: 'recording',
          reference_id: recordingId,
          reference_activeflow_id: parent.id,
          variables: parent.vars.custom(),
          originator: parent.call,
        }),
      );
    };
  }

  /** Creates and starts an activeflow; FLOW_NOT_FOUND when flow_id names no flow. */
  async start(req: StartRequest): Promise<ActiveflowSession> {
    let actions = req.actions ?? [];
    let flowId = EMPTY_UUID;
    let onComplete = req.on_complete_flow_id ?? EMPTY_UUID;
    if (!isUnset(req.flow_id)) {
      const flow = req.flow?.id === req.flow_id ? req.flow : await this.deps.flows.get(req.flow_id!, req.customer_id);
      if (!flow) throw new ApiError('FLOW_NOT_FOUND', `flow ${req.flow_id} not found`);
      actions = flow.actions;
      flowId = flow.id;
      if (req.on_complete_flow_id === undefined) onComplete = flow.on_complete_flow_id || EMPTY_UUID;
    }
    const session = new ActiveflowSession(
      {
        id: req.id ?? randomUUID(),
        customer_id: req.customer_id,
        flow_id: flowId,
        actions,
        reference_type: req.reference_type,
        reference_id: req.reference_id ?? req.call?.info.id ?? EMPTY_UUID,
        reference_activeflow_id: req.reference_activeflow_id ?? EMPTY_UUID,
        on_complete_flow_id: onComplete,
        webhook_uri: req.webhook_uri ?? '',
        webhook_method: req.webhook_method ?? '',
        variables: req.variables ?? {},
        complete_count: req.complete_count ?? 0,
        call: req.call,
        originator: req.originator,
        adopt: req.adopt,
      },
      this.deps,
    );
    this.live.set(session.id, session);
    await session.start();
    this.follow(session.done.then((rec) => this.afterEnd(session, rec)));
    return session;
  }

  get(id: string): ActiveflowSession | undefined {
    return this.live.get(id);
  }

  /** Stops a running activeflow; idempotent (an ended one returns its stored record). */
  async stop(id: string): Promise<ActiveflowRecord | undefined> {
    const s = this.live.get(id);
    if (s) return s.stop();
    return this.deps.store.get(id);
  }

  /** Continues a blocked activeflow; false when it is not running or not blocked. */
  continue(id: string): boolean {
    return this.live.get(id)?.continue() ?? false;
  }

  /** True when nothing runs and nothing is about to start. */
  get idle(): boolean {
    return this.live.size === 0 && this.pending.size === 0;
  }

  /** Resolves when idle. */
  async settled(): Promise<void> {
    while (!this.idle) await Promise.race([...this.pending, ...[...this.live.values()].map((s) => s.done)]);
  }

  private follow(p: Promise<unknown>): void {
    const tracked = p.catch((e: Error) => this.trace('activeflow_start_failed', { error: e.message }));
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  private async afterEnd(session: ActiveflowSession, rec: ActiveflowRecord): Promise<void> {
    this.live.delete(session.id);
    const next = rec.complete_count + 1;
    if (!isUnset(rec.on_complete_flow_id) && CHAIN_REASONS.has(rec.end_reason)) {
      if (next <= this.deps.limits.maxCompleteChain) {
        try {
          await this.start({
            customer_id: rec.customer_id,
            flow_id: rec.on_complete_flow_id,
            reference_type: rec.reference_type,
            reference_id: rec.reference_id,
            reference_activeflow_id: rec.id,
            variables: session.vars.custom(),
            complete_count: next,
            call: session.liveCall,
            originator: session.call,
          });
          return;
        } catch (e) {
          this.trace('activeflow_start_failed', { error: (e as Error).message, after: rec.id });
        }
      } else {
        this.trace('complete_chain_limit', { after: rec.id, limit: this.deps.limits.maxCompleteChain });
      }
    }
    const call = session.liveCall;
    if (call && this.opts.hangupOnEnd !== false) await call.hangup('normal').catch(() => undefined);
  }

  private trace(event: string, data: Record<string, unknown>): void {
    const entry: TraceEntry = { at: this.deps.clock.now(), activeflow_id: '', event, ...data };
    this.deps.trace?.(entry);
  }
}
