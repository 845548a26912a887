/**
 * Makes and runs calls on this node: inbound calls from the router, outgoing legs (originate
 * commands, the flow's connect and call actions), the activeflow of each call, and the live-call
 * commands (hangup, mute, recordings). Chained legs hang up with their master.
 */
import { inCallSpan, traceCall } from './trace';
import { callsRepo, type Address, type CallRow } from '../../core/repos/calls';
import { EMPTY_UUID, newId } from '../../core/ids';
import { nodeCallsKey } from '../../core/calls/node-keys';
import { isUniqueViolation, retrying, retryWrite } from '../../core/db/retry';
import { PgActiveflowStore } from '../../core/repos/activeflows';
import { PgFlowStore } from '../../core/repos/flows';
import type { Action, FlowDefinition } from '../../core/flow';
import { ActiveflowManager } from '../flow/manager';
import type { Address as FlowAddress, ConnectRequest, ConnectResult, OriginateRequest } from '../flow/call-port';
import { realClock, abortError } from '../kit/clock';
import { PolicyHttp } from '../kit/http';
import { DEFAULT_LIMITS } from '../flow/limits';
import type { FlowServices } from '../flow/services';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import { targetsFor } from '../outbound/targets';
import { internalDestination } from '../outbound/internal';
import { dialInternal } from './internal-dial';
import { dialCall } from './dial';
import { allocateEndpoint } from './endpoint';
import type { AudioCodecName } from '../../media-engine';
import type { CallEndpoint } from '../media-server/endpoint';
import type { CallDeps } from './deps';
import { escapeSipUser, nameAddr } from '../kit/sip-uri';
import { CallSession } from './session';
import { FlowPort, type CallLegs } from './flow-port';
import { bridgeFirstAnswer } from './connect';
import { activeflowEmitter } from './events';
import type { MediaEncryption } from '../../core/sip/media-encryption';
import type { DtmfMode } from '../../core/calls/dtmf-mode';
import { inboundMedia } from './inbound-media';
import { refuseOffer } from './media-refusal';
import { sipOffer } from './offer';

export type { CallDeps } from './deps';

/** A flow-side address (every field optional) as the Call row stores it. */
function toAddress(a: FlowAddress): Address {
  return { type: a.type ?? '', target: a.target ?? '', target_name: a.target_name, name: a.name, detail: a.detail };
}

export interface FlowSpec {
  flowId?: string;
  /** flowId's flow, already read (the router reads a number's with it) */
  flow?: FlowDefinition | null;
  actions?: Action[];
  variables?: Record<string, string>;
}

export class CallFactory implements CallLegs {
  readonly manager: ActiveflowManager;
  /** The node's subsystems as flow actions see them; subsystems fill their members at start. */
  readonly services: FlowServices = {};

  constructor(readonly deps: CallDeps) {
    this.manager = new ActiveflowManager({
      store: new PgActiveflowStore(deps.db, {
        retry: retrying({ onRetry: (err, n) => n === 1 && deps.logger.warn({ err: (err as Error)?.message }, 'database unreachable: retrying an activeflow write') }),
      }),
      flows: new PgFlowStore(deps.db),
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

  /**
   * Owner first, then the row's node: POST /calls/{id}/hangup cancels a dialing call itself only while the row
   * names no node, and otherwise needs a live owner; in this order there is no moment where it finds neither.
   */
  private async own(call: CallSession): Promise<void> {
    traceCall(call);
    await this.deps.calls.add(call);
    await this.nameNode(call);
  }

  /** The row names this node (the Call's node_id) from the moment it owns the call; best effort. */
  private async nameNode(call: CallSession): Promise<void> {
    const nodeId = this.deps.calls.nodeId;
    if (call.row.node_id === nodeId) return;
    try {
      await this.repo.setNode(call.id, nodeId);
      call.state.patch({ node_id: nodeId });
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message, call: call.id }, "could not write the call's node");
    }
  }

  get(id: string): CallSession | undefined {
    const c = this.deps.calls.get(id);
    return c instanceof CallSession ? c : undefined;
  }

  /** An inbound INVITE becomes an incoming call (dialing, then ringing); null when its SDP is refused (488 sent). */
  async inbound(
    req: SrfRequest,
    res: SrfResponse,
    c: {
      customerId: string;
      source: Address;
      destination: Address;
      mediaEncryption?: MediaEncryption;
      /** how digits are sent to the caller */ dtmfMode?: DtmfMode;
      /** the codecs the caller's calls may use */ codecs?: AudioCodecName[];
      /** a provider delivered it: its caller is one the PSTN asserted */ fromPstn?: boolean;
    },
  ): Promise<CallSession | null> {
    // an SRTP / WebRTC offer goes through rtpengine first: the engine sees plain RTP (inbound-media.ts)
    const media = await inboundMedia(this.deps, req, c.mediaEncryption ?? 'none', c.codecs);
    if ('refused' in media) {
      this.deps.logger.info({ why: media.refused }, 'inbound SDP refused');
      refuseOffer(res, media.refused);
      return null;
    }
    const { endpoint, relay } = media;
    const row = await this.createRow({
      customer_id: c.customerId,
      source: c.source,
      destination: c.destination,
      direction: 'incoming',
      status: 'dialing',
      sip_call_id: req.get('Call-ID') ?? '',
      node_id: this.deps.calls.nodeId,
      ...(c.fromPstn ? { data: { pstn_inbound: true } } : {}),
    }).catch(async (err: unknown) => {
      // no call exists without its row: the endpoint goes back before the INVITE is refused (router)
      await endpoint.destroy().catch(() => undefined);
      await relay?.close('no call row');
      throw err;
    });
    const call = new CallSession(row, this.deps);
    call.endpoint = endpoint;
    call.relay = relay;
    if (c.dtmfMode) call.dtmfMode = c.dtmfMode;
    call.setOffer(sipOffer(this.deps, req, res));
    await this.own(call);
    await call.publish('call_created');
    res.send(180);
    // the row says ringing when the write is through; the flow does not wait for it (a row locked by a
    // transaction elsewhere, a slow database): the call's moves are written in order (call/state.ts), and
    // a failed write ends the call (setStatus)
    void call.setStatus('ringing');
    return call;
  }

  /** An incoming call that came from no INVITE: the far side of an internal call (outbound/internal.ts). */
  async incomingLeg(c: { customerId: string; source: Address; destination: Address }, endpoint: CallEndpoint): Promise<CallSession> {
    const row = await this.createRow({ customer_id: c.customerId, source: c.source, destination: c.destination, direction: 'incoming', status: 'dialing', node_id: this.deps.calls.nodeId });
    const call = new CallSession(row, this.deps);
    call.endpoint = endpoint;
    await this.own(call);
    await call.publish('call_created');
    return call;
  }

  private readonly ports = new WeakMap<CallSession, FlowPort>();

  /** The flow port of a call (one per call). */
  portOf(call: CallSession): FlowPort {
    let port = this.ports.get(call);
    if (!port) this.ports.set(call, (port = new FlowPort(call, this)));
    return port;
  }

  /**
   * Starts the call's new activeflow and records it on the call. The call holds the flow's id before the
   * flow starts (CallState.setFlow): its first action may answer the call (the box of an extension's
   * voicemail), and the answer's row and events then already name it; the flow never waits for a write
   * of the call's row (a row locked elsewhere holds back only the row). A flow that does not start
   * leaves the call as it was.
   */
  async runFlow(call: CallSession, spec: FlowSpec): Promise<string> {
    const port = this.portOf(call);
    const id = newId();
    const flowId = spec.flowId || EMPTY_UUID;
    const before = { activeflow_id: call.row.activeflow_id, flow_id: call.row.flow_id };
    call.state.setFlow({ activeflow_id: id, flow_id: flowId });
    const session = await inCallSpan(call, () =>
      this.manager.start({
        id,
        customer_id: call.row.customer_id,
        flow_id: spec.flowId && spec.flowId !== EMPTY_UUID ? spec.flowId : undefined,
        flow: spec.flow,
        actions: spec.actions,
        reference_type: 'call',
        reference_id: call.id,
        call: port,
        originator: port,
        variables: spec.variables,
      }),
    ).catch(async (err: unknown) => {
      call.state.setFlow(before);
      // a status write meanwhile may have carried the new id
      await retryWrite(this.deps.logger, `call ${call.id} activeflow`, () => this.repo.setActiveflow(call.id, before.activeflow_id, before.flow_id));
      throw err;
    });
    // the flow runs: a write that fails for good is logged, not thrown (the call's status writes carry the id)
    await retryWrite(this.deps.logger, `call ${call.id} activeflow`, () => this.repo.setActiveflow(call.id, id, flowId)).catch((err: unknown) =>
      this.deps.logger.error({ err, call: call.id, activeflow_id: id }, "could not write the call's activeflow; its next status write carries it"),
    );
    return session.id;
  }

  /** From URI for an outgoing leg whose source is `source`. */
  fromUri(source: Address | undefined, anonymous = false): string {
    if (anonymous || !source?.target) return 'sip:anonymous@anonymous.invalid';
    // a caller id is customer input: its user part is escaped and a host that is not a plain host[:port]
    // is replaced by ours, so nothing in it can end the URI or add header parameters
    const t = source.target.replace(/^sips?:/i, '');
    const at = t.lastIndexOf('@');
    const host = at >= 0 ? t.slice(at + 1) : '';
    return `sip:${escapeSipUser(at >= 0 ? t.slice(0, at) : t)}@${/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host) ? host : this.deps.config.sipDomain}`;
  }

  /**
   * Dials an outgoing call this node owns; resolves when it is answered (true) or has ended (false).
   * Never rejects: a failure at any point of dialling (a database write, no media) ends the call
   * with a reason first.
   */
  async dialOut(call: CallSession, opts: { near?: CallSession; anonymous?: boolean } = {}): Promise<boolean> {
    try {
      // the outgoing INVITE's span in sip-server is a child of the call's (outbound/uac.ts)
      return await inCallSpan(call, () => this.dialTargets(call, opts));
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message, call: call.id }, 'dialling failed: ending the call');
      await call.close({ cause: 'failure', by: 'local', why: `dial failed: ${(err as Error).message}`, announce: true });
      return false;
    }
  }

  private async dialTargets(call: CallSession, opts: { near?: CallSession; anonymous?: boolean }): Promise<boolean> {
    // an own +899 number is routed internally: its flow runs on a leg of this node
    const internal = await internalDestination(this.deps.db, call.row.customer_id, call.row.destination);
    const timeoutMs = Number(call.row.data?.dial_timeout) > 0 ? Number(call.row.data.dial_timeout) : this.deps.app.dialTimeoutMs;
    if (internal) return dialInternal(this, call, internal, timeoutMs);
    // a number (or an agent's numbers) goes out with a caller id the rule allows (core/calls/caller-id)
    const mayReachPstn = call.row.destination.type === 'tel' || call.row.destination.type === 'agent';
    const targets = await targetsFor(this.deps, call.row.customer_id, call.row.destination, {
      callId: call.id,
      source: call.row.source,
      inboundCaller: mayReachPstn ? await this.inboundCallerOf(call) : null,
    });
    this.deps.logger.debug({ call: call.id, targets: targets.map((t) => t.uri) }, 'dialing');
    const replaced = call.row.destination.type === 'tel' ? targets.find((t) => t.callerId?.replaced)?.callerId : undefined;
    if (replaced) {
      // the call's record shows the caller id the carrier saw
      await retryWrite(this.deps.logger, `call ${call.id} source`, () => this.repo.setSource(call.id, replaced.source));
      call.state.patch({ source: replaced.source });
    }
    const nameOf = (a: Address) => (opts.anonymous ? 'Anonymous' : a.target_name || a.name || undefined);
    return dialCall(this.deps, call, targets, {
      from: this.fromUri(call.row.source, opts.anonymous),
      fromName: nameOf(call.row.source),
      fromFor: (t) => t.callerId && nameAddr(this.fromUri(t.callerId.source, opts.anonymous), nameOf(t.callerId.source)),
      timeoutMs,
      ...(opts.near?.endpoint ? { near: opts.near.endpoint } : {}),
    });
  }

  /**
   * Forwarding (core/calls/caller-id rule 2): the caller of the inbound call from the PSTN (a
   * provider's INVITE, data.pstn_inbound) this leg is chained to, else null.
   */
  private async inboundCallerOf(call: CallSession): Promise<Address | null> {
    const id = call.row.master_call_id;
    if (!id || id === EMPTY_UUID) return null;
    const master = this.get(id)?.row ?? (await this.repo.get(id));
    if (!master || master.customer_id !== call.row.customer_id || master.direction !== 'incoming' || master.data?.pstn_inbound !== true) return null;
    return master.source;
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
    const [claimed, row] = await Promise.all([this.deps.redis.set(`${this.deps.config.redisKeyPrefix}originate-claim:${id}`, this.deps.calls.nodeId, 'EX', 86_400, 'NX'), this.repo.get(id)]);
    if (claimed !== 'OK') return;
    if (!row || row.status !== 'dialing' || row.direction !== 'outgoing') return;
    // in this node's call set from the claim on, not only once owned: if the node dies in between,
    // the node sweeper still finds the call and ends it instead of leaving it dialing
    await this.deps.redis.sadd(`${this.deps.config.redisKeyPrefix}${nodeCallsKey(this.deps.calls.nodeId)}`, id).catch(() => undefined);
    await this.startOutgoing(row, {
      flowId: row.flow_id !== EMPTY_UUID ? row.flow_id : undefined,
      actions: Array.isArray(row.data?.actions) ? (row.data.actions as Action[]) : undefined,
      variables: (row.data?.variables as Record<string, string> | undefined) ?? undefined,
    });
  }

  /**
   * Owns, dials and (on answer, or at once with early_execution) runs the flow of an outgoing row.
   * The dialling and the flow's start are the session's work (CallSession.own): a failure at any
   * point of them ends the call with a reason, so no row stays dialing.
   */
  private async startOutgoing(row: CallRow, flow: FlowSpec | null, master?: CallSession): Promise<CallSession> {
    const call = new CallSession(row, this.deps);
    // the endpoint is made while the owner key is written; without one the call fails here (endpoint.ts)
    const endpoint = await allocateEndpoint(this.deps, call, {}, { ready: this.own(call) });
    master?.adopt(call);
    if (endpoint) call.own(this.runOutgoing(call, flow), 'dial');
    return call;
  }

  private async runOutgoing(call: CallSession, flow: FlowSpec | null): Promise<void> {
    const data = call.row.data ?? {};
    const anonymous = data.anonymous === true || data.anonymous === 'yes';
    const early = data.early_execution === true;
    const spec = flow && (flow.flowId || flow.actions?.length) ? flow : null;
    const dialing = this.dialOut(call, { anonymous });
    // both are awaited together: a failure of either is seen at once, neither is left unobserved
    const [answered] = await Promise.all([dialing, spec && early ? this.runFlow(call, spec) : null]);
    if (answered && spec && !early && !call.isEnded) await this.runFlow(call, spec);
  }

  /** A new outgoing row for a leg the flow asked for. */
  private async newLeg(customerId: string, source: Address | undefined, destination: Address, master: CallSession | null, data: Record<string, unknown>): Promise<CallRow> {
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
  async originateFromFlow(customerId: string, req: OriginateRequest, master: CallSession | null): Promise<{ call_ids: string[] }> {
    const ids: string[] = [];
    for (const d of req.destinations) {
      const chainedTo = req.chained && master ? master : null;
      const row = await this.newLeg(customerId, req.source && toAddress(req.source), toAddress(d), chainedTo, {
        early_execution: req.early_execution,
        anonymous: req.anonymous === 'yes',
      });
      await new CallSession(row, this.deps).publish('call_created');
      ids.push(row.id);
      await this.startOutgoing(row, { flowId: req.flow_id || undefined, actions: req.actions as Action[] }, chainedTo ?? undefined);
    }
    return { call_ids: ids };
  }

  /** The connect action: the destinations as chained legs of the master, the first to answer bridged (connect.ts). */
  /** `noAnswerMs`: the legs ring at most this long, then the result is not answered (`noanswer`; connect.ts RingOutcome). */
  async connect(master: CallSession, req: ConnectRequest, signal: AbortSignal, ring: { noAnswerMs?: number } = {}): Promise<ConnectResult> {
    if (signal.aborted) throw abortError(signal);
    const legs: CallSession[] = [];
    try {
      for (const d of req.destinations) {
        const row = await this.newLeg(master.row.customer_id, req.source ? toAddress(req.source) : master.row.source, toAddress(d), master, {
          anonymous: req.anonymous === 'yes',
          ...(req.ring_timeout ? { dial_timeout: req.ring_timeout } : {}),
        });
        const leg = new CallSession(row, this.deps);
        legs.push(leg);
        await this.own(leg);
        await leg.publish('call_created');
        // a leg a transfer took over (master replaced) outlives its master
        master.adopt(leg);
        leg.on('status', (s) => {
          if (s === 'ringing' && !master.answered) void master.setStatus('ringing');
        });
      }
    } catch (err) {
      // a leg that could not be made: none of them is dialled, none stays dialing
      await Promise.all(legs.map((l) => l.close({ cause: 'failure', by: 'local', why: 'connect legs not made', announce: true })));
      throw err;
    }
    return bridgeFirstAnswer(master, legs, { dial: (leg) => this.dialOut(leg, { near: master, anonymous: req.anonymous === 'yes' }) }, signal, {
      durationLimitMs: req.duration_limit,
      record: req.record ?? false,
      hangupOnStar: req.hangup_on_star ?? false,
      holdMusic: req.hold_music,
      ...(ring.noAnswerMs !== undefined ? { noAnswerMs: ring.noAnswerMs } : {}),
    });
  }

  /**
   * Mute/unmute: the session's media state (which alone mutes the endpoint, so an unmute never lets out
   * the audio of a silenced or held call), then the row (idempotent); a change is published as call_updated.
   */
  async mute(call: CallSession, direction: 'both' | 'in' | 'out', on: boolean): Promise<void> {
    const want = on ? direction : '';
    // decided and noted before the first await: a redelivered copy handled at the same time sees no change
    const changed = call.row.mute_direction !== want;
    if (changed) call.state.patch({ mute_direction: want });
    await call.mediaState.set({ mute: want });
    const row = await retryWrite(this.deps.logger, `call ${call.id} mute`, () => this.repo.setMute(call.id, want));
    if (row && changed) await call.updated({ mute_direction: row.mute_direction, tm_update: row.tm_update });
  }
}
