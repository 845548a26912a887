/**
 * Supervisor (docs/pbx.md "Supervisor"; Asterisk ChanSpy's spy `q`, whisper `w` and barge `B`): a
 * manager's own call joins a live two-party call.
 *
 *   listen   the supervisor hears both sides; nobody hears it;
 *   whisper  the supervised party (the agent: the call named, or the extension dialled) hears it too,
 *            its peer (the customer) never does (the mixer leaves it out of every other mix);
 *   barge    all three hear each other.
 *
 * The supervised call's Bridge is paused ('supervise') and its two endpoints and the supervisor's
 * meet in a small conference mix on the media engine; the supervisor switches mode with DTMF 4, 5,
 * 6 (ChanSpy's `d` option). The supervisor hanging up (or DELETE) links the two sides again; the
 * supervised call ending (its bridge closes) hangs the supervisor up. Events supervise_started,
 * supervise_updated, supervise_ended (with `reason`).
 */
import { randomUUID } from 'node:crypto';
import { publishResourceEvent, type EventType } from '../../core/events/catalogue';
import { MODE_KEYS, supervisions, type SuperviseMode, type Supervision } from '../../core/pbx/supervisions';
import type { Address } from '../../core/repos/calls';
import type { Conference } from '../../media-engine';
import { embeddedEndpoint, type CallEndpoint } from '../media-server/endpoint';
import { hasOwnMix } from '../media-server/conference';
import { MediaBackendUnsupported } from '../media-server/port';
import type { Bridge } from '../call/bridge';
import type { CallFactory } from '../call/factory';
import { CallSession } from '../call/session';
import { createGroupcall } from '../groupcall/create';
import { JOIN_MUTED, modeSteps } from './supervise-mix';
import type { GroupcallRunner } from '../groupcall/runner';

/** Supervision as a refusal on the fsmrf backend names it. */
export const SUPERVISION_FEATURE = "supervision (listen, whisper, barge: the embedded engine's conference mixer)";

/** Why a supervision ended (supervise_ended `reason`). */
export type SuperviseEndReason = 'supervisor_left' | 'call_ended' | 'stopped' | 'no_answer' | 'failed';

/** Why a supervision cannot start; `unsupported`: the node's media backend has no engine mixer (fsmrf). */
export class SuperviseError extends Error {
  constructor(
    message: string,
    readonly why: 'not_bridged' | 'supervised' | 'ended' | 'unsupported',
  ) {
    super(message);
  }
}

/**
 * The SIP answer a refusal gives the supervisor's phone (its feature code here, or the PBX leg of its
 * node: remote.ts relays it). 501 on the fsmrf backend: supervision is the engine's mix (its whisper
 * leaves the supervisor out of the peer's mix), which a switch's room does not give here.
 */
export function superviseRefusal(why: SuperviseError['why']): [number, string] {
  if (why === 'supervised') return [486, 'Already Supervised'];
  if (why === 'unsupported') return [501, 'Supervision Not On This Media Backend'];
  return [404, 'Nothing To Supervise'];
}

/**
 * The supervisor's side: its call on this node, or the PBX leg of a supervisor on another node
 * (xnode/pbx-answer.ts), whose `callId` is that node's call.
 */
export interface SupervisorParty {
  readonly id: string;
  readonly endpoint: CallEndpoint | null;
  readonly isEnded: boolean;
  readonly done: Promise<unknown>;
  hangup(why?: string): Promise<void>;
}

interface Live {
  rec: Supervision;
  readonly target: CallSession;
  readonly peer: CallSession;
  readonly supervisor: SupervisorParty;
  readonly bridge: Bridge;
  readonly conference: Conference;
  ended: boolean;
}

const endpointOf = (c: SupervisorParty): CallEndpoint => {
  const ep = c.endpoint;
  if (!ep) throw new SuperviseError(`${c.id} has no media`, 'ended');
  return ep;
};

export class SupervisorService {
  private readonly byCall = new Map<string, Live>();
  /** Supervisor calls still ringing (API), by the supervised call's id. */
  private readonly ringing = new Map<string, { hangup(): Promise<void> }>();

  constructor(
    private readonly factory: CallFactory,
    private readonly runner: GroupcallRunner,
  ) {}

  private get deps() {
    return this.factory.deps;
  }

  private get store() {
    return supervisions(this.deps.redis, this.deps.config.redisKeyPrefix);
  }

  /** The live supervision of `callId` on this node. */
  of(callId: string): Supervision | null {
    return this.byCall.get(callId)?.rec ?? null;
  }

  /** The live call of this node whose party is extension `ext` of the customer and that talks to another call; null if none. */
  callOfExtension(customerId: string, ext: string): CallSession | null {
    for (const c of this.deps.calls.all()) {
      if (!(c instanceof CallSession) || c.isEnded || !c.answered || c.row.customer_id !== customerId) continue;
      const party = c.row.direction === 'incoming' ? c.row.source : c.row.destination;
      if (party.type !== 'extension' || party.target !== ext) continue;
      if (c.bridge?.state === 'open' && c.bridge.other(c) instanceof CallSession) return c;
    }
    return null;
  }

  /** The live call `callId` of the customer on this node, or null. */
  callById(customerId: string, callId: string): CallSession | null {
    const c = this.factory.get(callId);
    return c && !c.isEnded && c.row.customer_id === customerId ? c : null;
  }

  /** Checks that `target` can be supervised now (bridged to another call, not supervised). */
  check(target: CallSession): void {
    // the engine's mixer or nothing: createConference would refuse after the supervisor was answered
    if (hasOwnMix(this.deps.media)) throw new SuperviseError(new MediaBackendUnsupported('fsmrf', SUPERVISION_FEATURE).message, 'unsupported');
    if (target.isEnded) throw new SuperviseError('the call has ended', 'ended');
    if (this.byCall.has(target.id)) throw new SuperviseError('the call is supervised already', 'supervised');
    const b = target.bridge;
    if (b?.state !== 'open' || !(b.other(target) instanceof CallSession)) throw new SuperviseError('the call is not talking to another call', 'not_bridged');
  }

  /**
   * `supervisor` (answered, free) supervises `target` in `mode`; `rec` is the claimed record (API) or
   * null (a feature code: the record is claimed here). `supervisorCallId`: the supervisor's call (its
   * own id, or for a leg from another node that node's call). Resolves once the three are mixed.
   */
  async start(target: CallSession, supervisor: SupervisorParty, mode: SuperviseMode, rec: Supervision | null, supervisorCallId = supervisor.id): Promise<Supervision> {
    this.check(target);
    const bridge = target.bridge!;
    const peer = bridge.other(target) as CallSession;
    const now: Supervision = {
      id: rec?.id ?? randomUUID(),
      customer_id: target.row.customer_id,
      call_id: target.id,
      supervisor_call_id: supervisorCallId,
      mode,
      status: 'active',
      node_id: this.deps.calls.nodeId,
      tm_create: rec?.tm_create ?? new Date().toISOString(),
    };
    if (!rec && !(await this.store.claim(now))) throw new SuperviseError('the call is supervised already', 'supervised');
    const conference = await this.deps.media.createConference(`supervise-${now.id}`, { near: endpointOf(target) }).catch(async (err: Error) => {
      await this.release(now, 'failed');
      throw err;
    });
    const live: Live = { rec: now, target, peer, supervisor, bridge, conference, ended: false };
    this.byCall.set(target.id, live);
    try {
      await bridge.pause('supervise');
      await endpointOf(target).joinConference(conference);
      await endpointOf(peer).joinConference(conference);
      await endpointOf(supervisor).joinConference(conference, { mute: JOIN_MUTED });
      await this.apply(live, mode);
    } catch (err) {
      await this.end(live, target.isEnded || peer.isEnded ? 'call_ended' : 'failed');
      throw err;
    }
    await this.store.put(now);
    await this.publish('supervise_started', now, {});
    const onDtmf = (e: { dtmf: string }) => {
      const m = MODE_KEYS[e.dtmf];
      if (m) void this.setMode(target.id, m).catch(() => undefined);
    };
    supervisor.endpoint?.on('dtmf', onDtmf);
    void supervisor.done.then(() => this.end(live, 'supervisor_left'));
    // the supervised call ending closes its bridge: the supervisor is released
    bridge.once('closed', () => void this.end(live, 'call_ended'));
    // closed while the mix was made (its 'closed' already told)
    if (bridge.state === 'closed') void this.end(live, 'call_ended');
    this.deps.logger.info({ call: target.id, supervisor: supervisor.id, mode }, 'supervision started');
    return now;
  }

  /** Rings `to` (API); its answer supervises the call under the claimed record. No answer, or the call ended first: the record is released. */
  async ringAndStart(rec: Supervision, to: Address): Promise<void> {
    const target = this.factory.get(rec.call_id);
    if (!target || target.isEnded) return this.release(rec, 'call_ended');
    try {
      this.check(target);
    } catch (err) {
      // not talking to another call (a flow plays to it, it is parked): nobody is rung
      this.deps.logger.info({ err: (err as Error).message, call: rec.call_id }, 'supervision refused');
      return this.release(rec, 'failed');
    }
    const source = target.row.direction === 'incoming' ? target.row.destination : target.row.source;
    const { groupcall } = await createGroupcall(this.deps, { customerId: rec.customer_id, source, destinations: [to], ringMethod: 'ring_all', answerMethod: 'hangup_others' });
    const gc = this.runner.ring(groupcall);
    this.ringing.set(rec.call_id, gc);
    const answered = await Promise.race([gc.answered, target.done.then(() => null)]);
    this.ringing.delete(rec.call_id);
    const still = await this.store.get(rec.call_id);
    if (!answered || target.isEnded || still?.id !== rec.id) {
      if (answered) await answered.hangup('supervise_gone');
      else await gc.hangup();
      return this.release(rec, target.isEnded ? 'call_ended' : still?.id !== rec.id ? 'stopped' : 'no_answer');
    }
    try {
      // a PUT while it rang changed the stored mode
      await this.start(target, answered, still.mode, still);
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message, call: rec.call_id }, 'supervision failed');
      await answered.hangup('supervise_failed');
      if (!this.byCall.has(rec.call_id)) await this.release(rec, 'failed');
    }
  }

  /** Switches a live supervision's mode; false when the call is not supervised here. */
  async setMode(callId: string, mode: SuperviseMode): Promise<boolean> {
    const live = this.byCall.get(callId);
    if (!live || live.ended) return false;
    if (live.rec.mode === mode) return true;
    await this.apply(live, mode);
    live.rec = { ...live.rec, mode };
    await this.store.put(live.rec);
    await this.publish('supervise_updated', live.rec, {});
    return true;
  }

  /** Ends the supervision of `callId` (DELETE): the supervisor's call is hung up; false when there is none here. */
  async stop(callId: string, id: string): Promise<boolean> {
    const live = this.byCall.get(callId);
    if (live?.rec.id === id) {
      await this.end(live, 'stopped');
      await live.supervisor.hangup('supervise_stopped');
      return true;
    }
    const ring = this.ringing.get(callId);
    if (ring) {
      // its ringing ends: ringAndStart sees the record gone and says 'stopped'
      await this.store.release(callId, id);
      await ring.hangup();
      return true;
    }
    return false;
  }

  /** The mode's mix (supervise-mix.ts: steps in an order that never lets the wrong party hear the supervisor). */
  private async apply(live: Live, mode: SuperviseMode): Promise<void> {
    const sup = embeddedEndpoint(endpointOf(live.supervisor), 'supervision');
    for (const step of modeSteps(mode)) {
      if (step.op === 'whisper') await live.conference.whisper(sup, step.to ? embeddedEndpoint(endpointOf(live.target), 'supervision') : null);
      else if (step.op === 'mute') await live.conference.mute(sup, 'in');
      else await live.conference.unmute(sup, 'in');
    }
  }

  /** Once: the mix is undone, the two sides linked again (if both stay), the supervisor released if the call ended. */
  private async end(live: Live, reason: SuperviseEndReason): Promise<void> {
    if (live.ended) return;
    live.ended = true;
    if (this.byCall.get(live.target.id) === live) this.byCall.delete(live.target.id);
    for (const c of [live.target, live.peer, live.supervisor]) if (c.endpoint && !c.endpoint.destroyed) await c.endpoint.leaveConference().catch(() => undefined);
    await live.conference.destroy().catch(() => undefined);
    if (live.bridge.pauseReason === 'supervise' && !live.target.isEnded && !live.peer.isEnded)
      await live.bridge.resume().catch((err: Error) => this.deps.logger.warn({ err: err.message, call: live.target.id }, 'supervised call not linked again'));
    if (reason === 'call_ended' && !live.supervisor.isEnded) await live.supervisor.hangup('supervised_call_ended').catch(() => undefined);
    await this.release(live.rec, reason);
    this.deps.logger.info({ call: live.target.id, supervisor: live.supervisor.id, reason }, 'supervision ended');
  }

  private async release(rec: Supervision, reason: SuperviseEndReason): Promise<void> {
    await this.store.release(rec.call_id, rec.id).catch(() => undefined);
    await this.publish('supervise_ended', rec, { reason });
  }

  private async publish(type: EventType, rec: Supervision, extra: Record<string, unknown>): Promise<void> {
    await publishResourceEvent(this.deps.events, type, { ...rec, ...extra }).catch((err: Error) => this.deps.logger.warn({ err: err.message, call: rec.call_id }, `could not publish ${type}`));
  }

  /** Node shutdown: every supervisor released. */
  async stopAll(): Promise<void> {
    for (const live of [...this.byCall.values()]) await this.end(live, 'stopped');
    for (const r of this.ringing.values()) await r.hangup().catch(() => undefined);
  }
}
