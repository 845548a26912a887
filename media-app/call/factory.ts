/**
 * Makes and runs calls on this node: inbound calls from the router, outgoing legs (originate
 * commands, the flow's connect and call actions), the activeflow of each call, and the live-call
 * commands (hangup, mute, recordings). Chained legs hang up with their master.
 */
import { callsRepo, type Address, type CallRow } from '../../core/repos/calls';
import { EMPTY_UUID, newId } from '../../core/ids';
import { isUniqueViolation, retrying, retryWrite } from '../../core/db/retry';
import { PgActiveflowStore } from '../../core/repos/activeflows';
import { PgFlowStore } from '../../core/repos/flows';
import type { Action } from '../../core/flow';
import { ActiveflowManager } from '../flow/manager';
import type { ActiveflowStore, FlowStore } from '../flow/stores';
import type { Address as FlowAddress, ConnectRequest, ConnectResult, OriginateRequest } from '../flow/call-port';
import { realClock, abortError } from '../flow/clock';
import { PolicyHttp } from '../flow/http';
import { DEFAULT_LIMITS } from '../flow/limits';
import type { FlowServices } from '../flow/services';
import type { SrfRequest, SrfResponse } from '../srf';
import { dial } from '../outbound/dialer';
import { targetsFor } from '../outbound/targets';
import { dialInternal, internalDestination } from '../outbound/internal';
import type { Endpoint } from '../../media-engine';
import type { CallDeps } from './deps';
import { LiveCall } from './live-call';
import { LiveCallPort } from './live-call-port';
import { activeflowEmitter } from '../events';

export type { CallDeps } from './deps';

/** A flow-side address (every field optional) as the Call row stores it. */
function toAddress(a: FlowAddress): Address {
  return { type: a.type ?? '', target: a.target ?? '', target_name: a.target_name, name: a.name, detail: a.detail };
}

export interface FlowSpec {
  flowId?: string;
  actions?: Action[];
  variables?: Record<string, string>;
}

export class CallFactory {
  readonly manager: ActiveflowManager;
  /** The node's subsystems as flow actions see them; subsystems fill their members at start. */
  readonly services: FlowServices = {};

  constructor(readonly deps: CallDeps) {
    this.manager = new ActiveflowManager({
      store: new PgActiveflowStore(deps.db, { retry: retrying({ onRetry: (err, n) => n === 1 && deps.logger.warn({ err: (err as Error)?.message }, 'database unreachable: retrying an activeflow write') }) }) as unknown as ActiveflowStore,
      flows: new PgFlowStore(deps.db) as unknown as FlowStore,
      emitter: activeflowEmitter(deps.events, deps.logger),
      clock: realClock,
      http: new PolicyHttp(deps.egress, deps.logger),
      // what a flow is not told (a remote status, a fetched body's problem) is logged here
      trace: (e) => e.event.endsWith('_failed') && deps.logger.info(e, 'flow step failed'),
      limits: DEFAULT_LIMITS,
      services: this.services,
    });
  }

  private get repo() {
    return callsRepo(this.deps.db);
  }

  /**
   * Writes a new Call row, retried through a short database outage. The id is fixed before the
   * first attempt, so an attempt that committed unseen is found instead of written twice.
   */
  private createRow(input: Parameters<ReturnType<typeof callsRepo>['create']>[0]): Promise<CallRow> {
    const id = input.id ?? newId();
    let attempts = 0;
    return retryWrite(this.deps.logger, `call ${id} create`, async () => {
      try {
        attempts++;
        return await this.repo.create({ ...input, id });
      } catch (err) {
        const row = attempts > 1 && isUniqueViolation(err) ? await this.repo.get(id) : null;
        if (row) return row;
        throw err;
      }
    });
  }

  private async own(call: LiveCall): Promise<void> {
    await this.deps.calls.add(call);
  }

  get(id: string): LiveCall | undefined {
    return this.deps.calls.get(id) as LiveCall | undefined;
  }

  /** An inbound INVITE becomes an incoming call (dialing, then ringing); null when its SDP is refused (488 sent). */
  async inbound(req: SrfRequest, res: SrfResponse, c: { customerId: string; source: Address; destination: Address }): Promise<LiveCall | null> {
    let endpoint;
    try {
      endpoint = await this.deps.media.createEndpoint({ remoteSdp: req.body || undefined });
    } catch (err) {
      this.deps.logger.info({ err: (err as Error).message }, 'inbound SDP refused');
      res.send(488);
      return null;
    }
    const row = await this.createRow({
      customer_id: c.customerId,
      source: c.source,
      destination: c.destination,
      direction: 'incoming',
      status: 'dialing',
      sip_call_id: req.get('Call-ID') ?? '',
      node_id: this.deps.calls.nodeId,
    });
    const call = new LiveCall(row, this.deps);
    call.endpoint = endpoint;
    call.setPendingUas(req, res);
    await this.own(call);
    await call.publish('call_created');
    res.send(180);
    await call.setStatus('ringing');
    return call;
  }

  /** An incoming call that came from no INVITE: the far side of an internal call (outbound/internal.ts). */
  async incomingLeg(c: { customerId: string; source: Address; destination: Address }, endpoint: Endpoint): Promise<LiveCall> {
    const row = await this.createRow({ customer_id: c.customerId, source: c.source, destination: c.destination, direction: 'incoming', status: 'dialing', node_id: this.deps.calls.nodeId });
    const call = new LiveCall(row, this.deps);
    call.endpoint = endpoint;
    await this.own(call);
    await call.publish('call_created');
    return call;
  }

  /** The flow port of a call (one per call). */
  portOf(call: LiveCall): LiveCallPort {
    call.port ??= new LiveCallPort(call, this, () => call.row.activeflow_id);
    return call.port as LiveCallPort;
  }

  /** Starts the call's activeflow and records it on the call. */
  async runFlow(call: LiveCall, spec: FlowSpec): Promise<string> {
    const port = this.portOf(call);
    const session = await this.manager.start({
      customer_id: call.row.customer_id,
      flow_id: spec.flowId && spec.flowId !== EMPTY_UUID ? spec.flowId : undefined,
      actions: spec.actions,
      reference_type: 'call',
      reference_id: call.id,
      call: port,
      originator: port,
      variables: spec.variables,
    });
    await retryWrite(this.deps.logger, `call ${call.id} activeflow`, () => this.repo.setActiveflow(call.id, session.id, spec.flowId || EMPTY_UUID));
    call.row = { ...call.row, activeflow_id: session.id, flow_id: spec.flowId || EMPTY_UUID };
    return session.id;
  }

  /** From URI for an outgoing leg whose source is `source`. */
  fromUri(source: Address | undefined, anonymous = false): string {
    if (anonymous || !source?.target) return 'sip:anonymous@anonymous.invalid';
    const t = source.target.replace(/^sips?:/i, '');
    return t.includes('@') ? `sip:${t}` : `sip:${t}@${this.deps.config.sipDomain}`;
  }

  /** Dials an outgoing call this node owns; resolves when it is answered or has failed. */
  async dialOut(call: LiveCall, opts: { near?: LiveCall; anonymous?: boolean } = {}): Promise<boolean> {
    // an own +899 number is routed internally: its flow runs on a leg of this node
    const internal = await internalDestination(this.deps.db, call.row.customer_id, call.row.destination);
    if (internal) return dialInternal(this, call, internal);
    const targets = await targetsFor(this.deps, call.row.customer_id, call.row.destination, { callId: call.id });
    this.deps.logger.debug({ call: call.id, targets: targets.map((t) => t.uri) }, 'dialing');
    if (opts.near?.endpoint && !call.endpoint) {
      call.endpoint = await this.deps.media.createEndpoint({ near: opts.near.endpoint }).catch(() => null);
    }
    const r = await dial(this.deps, call, targets, {
      from: this.fromUri(call.row.source, opts.anonymous),
      fromName: opts.anonymous ? 'Anonymous' : call.row.source.target_name || call.row.source.name || undefined,
      timeoutMs: Number(call.row.data?.dial_timeout) > 0 ? Number(call.row.data.dial_timeout) : this.deps.app.dialTimeoutMs,
    });
    return r.answered;
  }

  /**
   * The originate command: control-api wrote the rows (outgoing, dialing). A Redis claim makes a
   * redelivered or duplicated command dial nothing twice, on any node.
   */
  async originate(callIds: string[]): Promise<void> {
    await Promise.all(callIds.map((id) => this.originateOne(id)));
  }

  private async originateOne(id: string): Promise<void> {
    // claim and read together: one round trip of latency less before the INVITE
    const [claimed, row] = await Promise.all([
      this.deps.redis.set(`${this.deps.config.redisKeyPrefix}originate-claim:${id}`, this.deps.calls.nodeId, 'EX', 86_400, 'NX'),
      this.repo.get(id),
    ]);
    if (claimed !== 'OK') return;
    if (!row || row.status !== 'dialing' || row.direction !== 'outgoing') return;
    await this.startOutgoing(row, {
      flowId: row.flow_id !== EMPTY_UUID ? row.flow_id : undefined,
      actions: Array.isArray(row.data?.actions) ? (row.data.actions as Action[]) : undefined,
      variables: (row.data?.variables as Record<string, string> | undefined) ?? undefined,
    });
  }

  /** Owns, dials and (on answer, or at once with early_execution) runs the flow of an outgoing row. */
  private async startOutgoing(row: CallRow, flow: FlowSpec | null, master?: LiveCall): Promise<LiveCall> {
    const call = new LiveCall(row, this.deps);
    // the endpoint is made while the owner key is written
    const [, endpoint] = await Promise.all([this.own(call), this.deps.media.createEndpoint().catch(() => null)]);
    if (endpoint) call.endpoint = endpoint;
    if (master) master.once('hangup', () => void call.hangup('normal'));
    const anonymous = row.data?.anonymous === true || row.data?.anonymous === 'yes';
    const early = row.data?.early_execution === true;
    const hasFlow = flow && (flow.flowId || flow.actions?.length);
    const dialing = this.dialOut(call, { anonymous });
    if (hasFlow && early) await this.runFlow(call, flow!).catch((err: Error) => this.flowFailed(call, err));
    void dialing.then(async (answered) => {
      if (answered && hasFlow && !early) await this.runFlow(call, flow!).catch((err: Error) => this.flowFailed(call, err));
    });
    return call;
  }

  private async flowFailed(call: LiveCall, err: Error): Promise<void> {
    this.deps.logger.warn({ call: call.id, err: err.message }, 'activeflow did not start');
    await call.hangup('normal');
  }

  /** A new outgoing row for a leg the flow asked for. */
  private async newLeg(customerId: string, source: Address | undefined, destination: Address, master: LiveCall | null, data: Record<string, unknown>): Promise<CallRow> {
    const row = await this.createRow({
      customer_id: customerId,
      source: source ?? { type: '', target: '' },
      destination: { type: destination.type ?? '', target: destination.target ?? '', target_name: destination.target_name, name: destination.name, detail: destination.detail },
      direction: 'outgoing',
      status: 'dialing',
      master_call_id: master?.id ?? EMPTY_UUID,
      node_id: this.deps.calls.nodeId,
      data,
    });
    if (master) await retryWrite(this.deps.logger, `call ${master.id} chained`, () => this.repo.addChained(master.id, row.id));
    return row;
  }

  /** The flow's call action: independent (or chained) calls running their own flow. */
  async originateFromFlow(customerId: string, req: OriginateRequest, master: LiveCall | null): Promise<{ call_ids: string[] }> {
    const ids: string[] = [];
    for (const d of req.destinations) {
      const chainedTo = req.chained && master ? master : null;
      const row = await this.newLeg(customerId, req.source && toAddress(req.source), toAddress(d), chainedTo, {
        early_execution: req.early_execution,
        anonymous: req.anonymous === 'yes',
      });
      const call = new LiveCall(row, this.deps);
      await call.publish('call_created');
      ids.push(row.id);
      await this.startOutgoing(row, { flowId: req.flow_id || undefined, actions: req.actions as Action[] }, chainedTo ?? undefined);
    }
    return { call_ids: ids };
  }

  /**
   * The connect action (and extension-to-extension calls): dials every destination at once as
   * chained legs, bridges the first that answers to the master, hangs up the rest, and resolves when
   * the bridge ends.
   */
  async connect(master: LiveCall, req: ConnectRequest, signal: AbortSignal): Promise<ConnectResult> {
    if (signal.aborted) throw abortError(signal);
    const legs: LiveCall[] = [];
    for (const d of req.destinations) {
      const row = await this.newLeg(master.row.customer_id, req.source ? toAddress(req.source) : master.row.source, toAddress(d), master, {
        anonymous: req.anonymous === 'yes',
      });
      const leg = new LiveCall(row, this.deps);
      await this.own(leg);
      await leg.publish('call_created');
      // a leg a transfer took over (master replaced) outlives its master
      master.once('hangup', () => void (master.replacedBy ? undefined : leg.hangup('normal')));
      leg.on('status', (s) => {
        if (s === 'ringing' && !master.answered) void master.setStatus('ringing');
      });
      legs.push(leg);
    }
    const onAbort = () => legs.forEach((l) => void (master.replacedBy ? undefined : l.hangup('normal')));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const winner = await new Promise<LiveCall | null>((resolve) => {
        let left = legs.length;
        if (!left) resolve(null);
        for (const leg of legs) {
          this.dialOut(leg, { near: master, anonymous: req.anonymous === 'yes' }).then(
            (answered) => {
              if (answered) resolve(leg);
              else if (--left === 0) resolve(null);
            },
            () => --left === 0 && resolve(null),
          );
        }
        void master.done.then(() => resolve(null));
      });
      for (const l of legs) if (l !== winner) void l.hangup('normal');
      if (!winner) {
        const reasons = legs.map((l) => l.row.hangup_reason).filter(Boolean);
        return { answered: false, hangup_reason: reasons[0] ?? 'failed', ended_by: master.isEnded ? 'master' : 'destination' };
      }
      if (master.isEnded) {
        await winner.hangup('normal');
        return { answered: true, hangup_reason: winner.row.hangup_reason, ended_by: 'master' };
      }
      await master.answer();
      await master.endpoint!.bridge(winner.endpoint!);
      // a transfer may put another call in either side's place (LiveCall.replaceWith): follow it
      let [a, b] = [master, winner];
      const replaced = (c: LiveCall) => new Promise<'replaced'>((r) => c.once('replaced', () => r('replaced')));
      for (;;) {
        const r = await Promise.race([a.done.then(() => 'a' as const), b.done.then(() => 'b' as const), replaced(a).then(() => 'ra' as const), replaced(b).then(() => 'rb' as const)]);
        if (r === 'ra') a = a.replacedBy!;
        else if (r === 'rb') b = b.replacedBy!;
        else if (r === 'a') {
          await b.hangup('normal');
          return { answered: true, hangup_reason: b.row.hangup_reason, ended_by: 'master' };
        } else {
          if (a === master) await master.endpoint?.unbridge().catch(() => undefined);
          else await a.hangup('normal');
          return { answered: true, hangup_reason: b.row.hangup_reason, ended_by: 'destination' };
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Mute/unmute: the endpoint, then the row (idempotent). */
  async mute(call: LiveCall, direction: 'both' | 'in' | 'out', on: boolean): Promise<void> {
    const ep = call.endpoint;
    if (ep && !call.isEnded) await (on ? ep.mute(direction) : ep.unmute(direction));
    await retryWrite(this.deps.logger, `call ${call.id} mute`, () => this.repo.setMute(call.id, on ? direction : ''));
  }
}
