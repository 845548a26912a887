/**
 * Runs a flow against a scripted virtual call, on virtual time, and returns the timeline: every
 * action with its tm_execute and substituted option, every media command, DTMF, hangups, variables,
 * and the final activeflow records. The runner is the production one; only the call and the clock
 * are simulated. HTTP (fetch, webhook_send) is real and goes through the egress policy of the
 * environment (EGRESS_ALLOW_CIDRS) in the local CLI (scripts/flow-simulate.ts); with `sendHttp: false`
 * (every simulation the API asks for, service.ts) nothing is sent: sim-http.ts answers from the script.
 */
import { EMPTY_UUID, flowInvalid, isUnset, parseActions, validateActions } from '../../../core/flow';
import { invalidArgument } from '../../../core/errors';
import type { TraceEntry } from '../activeflow';
import { ListEmitter } from '../events';
import { egressPolicyFor, type EgressPolicy } from '../../../core/net';
import { PolicyHttp, type FlowHttp } from '../../kit/http';
import { DEFAULT_LIMITS, type FlowLimits } from '../limits';
import { ActiveflowManager } from '../manager';
import type { ActiveflowRecord } from '../record';
import { InMemoryActiveflowStore, InMemoryFlowStore } from '../stores';
import { simScriptSchema, type SimScript } from '../../../core/flow/sim-script';
import { SimCall, SimOriginator } from './sim-call';
import { SimHttp } from './sim-http';
import { type RunOutcome, VirtualClock } from './virtual-clock';

export interface SimFlow {
  id?: string;
  actions: unknown;
  on_complete_flow_id?: string;
}

export interface TimelineEntry {
  /** Virtual ms since the start. */
  t: number;
  /** The same instant as wall-clock time (RFC 3339). */
  at: string;
  activeflow_id: string;
  event: string;
  [key: string]: unknown;
}

export interface SimResult {
  outcome: RunOutcome;
  /** Virtual ms at the end. */
  duration_ms: number;
  call_id: string;
  timeline: TimelineEntry[];
  /** Final records, in the order the activeflows started. */
  activeflows: ActiveflowRecord[];
  /** activeflow_* events as they were emitted: type, id, status, current action type. */
  events: { type: string; activeflow_id: string; status: string; current_action: string }[];
}

export interface SimOptions {
  /** HTTP client for fetch and webhook_send; default: the egress policy of process.env. */
  http?: FlowHttp;
  /** false: no HTTP is sent; the script's `http` answers (sim-http.ts), checked against `egress`. */
  sendHttp?: boolean;
  /** The policy HTTP is checked against (default: the one of process.env). */
  egress?: EgressPolicy;
  /** Real milliseconds the simulation may take; past them it ends with outcome real_time_limit. */
  realTimeLimitMs?: number;
  /** The customer the activeflows belong to (default: the empty UUID). */
  customerId?: string;
}

const DEFAULT_START = '2026-01-05T09:00:00.000Z'; // a Monday

export async function simulate(flow: SimFlow, scriptInput: unknown, opts: SimOptions = {}): Promise<SimResult> {
  const script = readScript(scriptInput);
  const { flows, flowId, actions } = flowsOf(flow, script);
  const base = Date.parse(script.start_time ?? DEFAULT_START);
  if (Number.isNaN(base)) throw invalidArgument('script.start_time: not a date', [{ field: 'script.start_time' }]);
  const clock = new VirtualClock(base);
  const timeline = new Timeline(base, clock);

  const limits: FlowLimits = { ...DEFAULT_LIMITS, ...(script.limits ?? {}) };
  const egress = opts.egress ?? egressPolicyFor(process.env);
  const http = opts.http ?? (opts.sendHttp === false ? new SimHttp(egress, script.http ?? [], timeline.callTrace) : new PolicyHttp(egress));
  const realDeadline = opts.realTimeLimitMs === undefined ? Infinity : Date.now() + opts.realTimeLimitMs;
  const emitter = new ListEmitter();
  const store = new InMemoryActiveflowStore();
  const manager = new ActiveflowManager({ store, emitter, flows, clock, http, limits, trace: timeline.trace });

  const onCall = (script.reference_type ?? 'call') === 'call';
  const call = onCall ? new SimCall(clock, script, timeline.callTrace) : undefined;
  const originator = call ? undefined : new SimOriginator(timeline.callTrace);
  schedule(script, clock, timeline, manager, call);

  await manager.start({
    customer_id: opts.customerId ?? EMPTY_UUID,
    flow_id: flowId,
    actions: flowId ? undefined : actions,
    on_complete_flow_id: flowId ? undefined : (flow.on_complete_flow_id ?? EMPTY_UUID),
    reference_type: onCall ? 'call' : 'api',
    variables: script.variables ?? {},
    call,
    originator,
  });

  const outcome = await runToEnd(script, clock, timeline, manager, emitter, realDeadline);
  const ids = [...new Set(emitter.events.filter((e) => e.type === 'activeflow_created').map((e) => e.record.id))];
  const activeflows = (await Promise.all(ids.map((id) => store.get(id)))).filter((r): r is ActiveflowRecord => !!r);
  return {
    outcome,
    duration_ms: clock.elapsedMs,
    call_id: call?.info.id ?? '',
    timeline: timeline.entries,
    activeflows,
    events: emitter.events.map((e) => ({
      type: e.type,
      activeflow_id: e.record.id,
      status: e.record.status,
      current_action: e.record.current_action?.type ?? '',
    })),
  };
}

/** The script, checked: a bad one is the API's invalid_argument naming the field. */
function readScript(scriptInput: unknown): SimScript {
  const parsed = simScriptSchema.safeParse(scriptInput ?? {});
  if (parsed.success) return parsed.data;
  const i = parsed.error.issues[0]!;
  throw invalidArgument(
    `script.${i.path.join('.')}: ${i.message}`,
    parsed.error.issues.map((x) => ({ field: `script.${x.path.join('.')}`, message: x.message })),
  );
}

/** The flows the simulation can reach: the script's, and the simulated flow itself when it has an id. */
function flowsOf(flow: SimFlow, script: SimScript): { flows: InMemoryFlowStore; flowId: string | undefined; actions: ReturnType<typeof parseActions> } {
  const actions = parseActions(flow.actions);
  const flows = new InMemoryFlowStore();
  for (const [i, f] of (script.flows ?? []).entries()) {
    const v = validateActions(f.actions, { field: `script.flows[${i}].actions` });
    if (!v.ok) throw flowInvalid(v.problems);
    flows.put({ id: f.id, actions: v.actions, on_complete_flow_id: f.on_complete_flow_id ?? EMPTY_UUID });
  }
  const flowId = flow.id && !isUnset(flow.id) ? flow.id : undefined;
  if (flowId) flows.put({ id: flowId, actions, on_complete_flow_id: flow.on_complete_flow_id ?? EMPTY_UUID });
  return { flows, flowId, actions };
}

/** The timeline being written: the runner's trace, and the call's events under the current activeflow. */
class Timeline {
  readonly entries: TimelineEntry[] = [];
  /** The activeflow the call's events belong to: the one created last. */
  currentId = '';

  constructor(
    private readonly base: number,
    private readonly clock: VirtualClock,
  ) {}

  readonly trace = (e: TraceEntry): void => {
    if (e.event === 'activeflow_created') this.currentId = e.activeflow_id;
    this.record(e);
  };

  readonly callTrace = (event: string, data: Record<string, unknown>): void => this.record({ at: this.clock.now(), activeflow_id: this.currentId, event, ...data });

  private record(e: TraceEntry): void {
    const { at, ...rest } = e;
    this.entries.push({ t: at - this.base, at: new Date(at).toISOString(), ...rest });
  }
}

/** The script's caller on virtual time: speech, hangups, stop and continue requests, keys. */
function schedule(script: SimScript, clock: VirtualClock, timeline: Timeline, manager: ActiveflowManager, call: SimCall | undefined): void {
  if (call) for (const sp of script.speech ?? []) clock.scheduleAt(sp.at, () => timeline.callTrace('speech', { duration_ms: sp.duration }));
  for (const ev of script.events ?? []) {
    clock.scheduleAt(ev.at, () => {
      if (ev.hangup) call?.remoteHangup(ev.reason ?? 'normal');
      if (ev.stop) {
        timeline.callTrace('stop_requested', {});
        void manager.stop(timeline.currentId);
      }
      if (ev.continue) timeline.callTrace('continue_requested', { released: manager.continue(timeline.currentId) });
    });
    if (ev.dtmf && call) {
      [...ev.dtmf].forEach((d, i) => clock.scheduleAt(ev.at + i * (ev.interval ?? 100), () => call.press(d)));
    }
  }
}

/** Runs virtual time until the runner is idle or a limit is reached; then stops whatever still runs. */
async function runToEnd(script: SimScript, clock: VirtualClock, timeline: Timeline, manager: ActiveflowManager, emitter: ListEmitter, realDeadline: number): Promise<RunOutcome> {
  const outcome = await clock.run(() => manager.idle && clock.realWorkInFlight === 0, script.max_ms ?? 3_600_000, realDeadline);
  if (outcome !== 'done') {
    // Whatever still runs (a block never continued, a wait with no end) is stopped, as a caller would.
    timeline.callTrace('simulation_ended', { why: outcome });
    const live = [...new Set(emitter.events.map((e) => e.record.id))].filter((id) => manager.get(id));
    for (const id of live) void manager.stop(id);
    await clock.run(() => manager.idle, clock.elapsedMs);
    await manager.settled();
  }
  return outcome;
}
