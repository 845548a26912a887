/**
 * The queue service of a media-app node: queue_join puts the node's caller in a queue, and this
 * node dispatches its own waiting callers (their call and media are here). Agents are shared
 * between nodes through Postgres: claiming one is a compare-and-set (available → ringing), so two
 * nodes never ring the same agent.
 *
 * A queuecall: initiating → waiting (wait audio loops) → connecting (the agent's addresses ring;
 * the caller still hears the wait audio) → service (the first leg to answer is bridged; agent
 * busy, in the same write: core/queues/service-write.ts) → done (agent available again), or → abandoned (caller hung up, wait_timeout, kick).
 * Nobody answering puts it back to waiting and the agent back to available. The caller's entry on
 * this node moves through entry-moves.ts (ENTRY_MOVES, one guarded move) and its timers (the wait
 * timeout, the service limit) are owned by the states that armed them.
 */
import { EventEmitter } from 'node:events';
import type { EventPublisher } from '../../core/events/bus';
import { EMPTY_UUID } from '../../core/ids';
import { toSid } from '../../core/twilio/sids';
import { claimAgent, setAgentStatus } from '../../core/agents/status';
import { queuesRepo, type QueueRow } from '../../core/repos/queues';
import { queuecallsRepo, type QueuecallRow, type QueuecallStatus } from '../../core/repos/queuecalls';
import { publishQueuecall, publishQueuecallStatus } from '../../core/queues/events';
import { startService } from '../../core/queues/service-write';
import type { CallFactory } from '../call/factory';
import { Bridge } from '../call/bridge';
import type { CallSession } from '../call/session';
import type { ActionContext, Outcome } from '../flow/actions/base';
import { NEXT } from '../flow/actions/base';
import { abortError } from '../kit/clock';
import { ringAgent, type Ringing } from './ring';
import { playWaitAudio } from './wait-audio';
import { EntryMoves } from './entry-moves';
import { realTimers, type TimerHost } from '../call/phase-timers';
import { playWaitDocument } from '../twiml/wait-document';
import { dequeueCaller, type DequeueHost, type DequeueOptions } from './dequeue';
import { takeThroughLeg } from './dequeue-leg';
import type { PbxLegClaims } from '../xnode/pbx-token';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import { RINGBACK_TONE } from '../kit/tones';

/** How often waiting callers look for an agent again (agents freed elsewhere, status changes). */
export const DISPATCH_INTERVAL_MS = 500;
/** An agent who let a caller's ring go unanswered is not rung again for that caller this long. */
export const UNANSWERED_COOLDOWN_MS = 5000;

/** Why a caller's wait ends; `leave`: its TwiML wait document said <Leave>. */
type EndHow = 'timeout' | 'kick' | 'service_over' | 'leave';

export interface Entry {
  qc: QueuecallRow;
  queue: QueueRow;
  caller: CallSession;
  ctx: ActionContext;
  /** The wait audio's (aborted when an agent or a dequeue takes the caller); `startWait` plays it again. */
  wait: AbortController;
  audio: Promise<void>;
  startWait: () => void;
  /** A <Dial><Queue> dequeue's bridge (dequeue.ts), closed when the caller's wait ends. */
  bridge: Bridge | null;
  /** Where the caller is (entry-moves.ts; the queuecall row follows it, written by `move`), and its timers. */
  readonly moves: EntryMoves;
  dispatching: boolean;
  ringing: Ringing | null;
  agentLeg: CallSession | null;
  /** Agents who did not answer this caller, with the time they may be rung again. */
  skip: Map<string, number>;
  end: (how: EndHow) => void;
  waitingSince: number;
}

/** What a QueueService tells its node (and the queue benchmark): a caller waits, an agent rings. */
export interface QueueServiceEvents {
  /** A caller started waiting; `at` is the wall-clock time in ms (performance.timeOrigin + now). */
  waiting: [e: { queuecallId: string; at: number }];
  /** An agent was claimed and rings for a waiting caller. */
  ringing: [e: { queuecallId: string; agentId: string }];
  error: [err: Error];
}

export class QueueService extends EventEmitter<QueueServiceEvents> {
  private readonly entries = new Map<string, Entry>();
  private readonly publisher: EventPublisher;
  /** The sweep's next tick, owned by the service's life (stop() clears it). */
  private tick: unknown;
  private stopped = false;

  /** `timers`: the entries' and the sweep's (a virtual clock's in tests). */
  constructor(
    private readonly factory: CallFactory,
    private readonly timers: TimerHost = realTimers,
  ) {
    super();
    this.on('error', () => undefined);
    this.publisher = factory.deps.events;
    this.tick = this.timers.set(DISPATCH_INTERVAL_MS, this.sweep);
  }

  private get db() {
    return this.factory.deps.db;
  }

  private get log() {
    return this.factory.deps.logger;
  }

  /** The customer's queue of that name, made on first use (TwiML <Enqueue>name); its id. */
  async named(customerId: string, name: string): Promise<string> {
    return (await queuesRepo(this.db).namedOrCreate(customerId, name)).queue.id;
  }

  /** The queue_join action: resolves when the caller leaves the queue with the caller still up. */
  async join(ctx: ActionContext, queueId: string, waitDoc?: { url: string; method: 'GET' | 'POST' }): Promise<Outcome> {
    if (ctx.referenceType !== 'call' || !ctx.call) return { kind: 'fail', message: 'queue_join needs a call' };
    const caller = this.factory.get(ctx.referenceId);
    if (!caller || caller.isEnded) return { kind: 'end', reason: 'call_hangup' };
    const queue = await queuesRepo(this.db).get(ctx.customerId, queueId);
    if (!queue) return { kind: 'fail', message: `queue ${queueId} not found` };
    await ctx.call.prepareMedia(ctx.signal);

    const input = {
      customer_id: ctx.customerId,
      queue_id: queue.id,
      reference_id: caller.id,
      reference_activeflow_id: ctx.activeflowId,
      node_id: this.factory.deps.calls.nodeId,
      timeout_wait: queue.wait_timeout,
      timeout_service: queue.service_timeout,
    };
    const made = queue.max_size === null ? await queuecallsRepo(this.db).create(input) : await queuecallsRepo(this.db).createWithin(queue.max_size, input);
    if (!made) return this.full(ctx, queue);
    let qc = made;
    // the wait flow loads while the records are written: fewer round trips before dispatch
    const waitFlowLoad = queue.wait_flow_id !== EMPTY_UUID ? ctx.flows.get(queue.wait_flow_id, ctx.customerId).catch(() => undefined) : Promise.resolve(undefined);
    await Promise.all([publishQueuecall(this.publisher, 'queuecall_created', qc), queuesRepo(this.db).bump(queue.id, 'total_incoming_count')]);
    for (const [k, v] of Object.entries({ 'queue.id': queue.id, 'queue.name': queue.name, 'queue.detail': queue.detail, 'queuecall.id': qc.id })) ctx.vars.set(`svc.${k}`, v);
    ctx.vars.set('svc.queuecall.timeout_wait', String(queue.wait_timeout));
    ctx.vars.set('svc.queuecall.timeout_service', String(queue.service_timeout));

    const moved = await this.move(qc, 'waiting');
    if (!moved) return NEXT; // kicked before it started
    qc = moved;

    const waitFlow = await waitFlowLoad;
    let finish!: (how: EndHow) => void;
    const ended = new Promise<EndHow>((r) => (finish = r));
    const call = ctx.call;
    const entry: Entry = {
      ...{ qc, queue, caller, ctx, wait: new AbortController(), audio: Promise.resolve(), startWait: () => undefined, bridge: null },
      ...{ moves: new EntryMoves(qc.id, this.log, this.timers), dispatching: false, ringing: null, agentLeg: null, skip: new Map(), end: finish, waitingSince: Date.now() },
    };
    entry.startWait = () => {
      entry.wait = new AbortController();
      const waitSignal = AbortSignal.any([entry.wait.signal, ctx.signal]);
      entry.audio = waitDoc ? this.waitDocument(entry, waitDoc, waitSignal) : playWaitAudio(call, waitFlow?.actions, waitSignal, (sig) => this.ringback(caller, sig));
    };
    this.entries.set(qc.id, entry);
    this.emit('waiting', { queuecallId: qc.id, at: performance.timeOrigin + performance.now() });
    entry.startWait();
    entry.moves.waitTimeout(queue.wait_timeout, () => finish('timeout'));
    const onAbort = () => finish('kick');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    void this.dispatch(entry);
    try {
      const how = await ended;
      const end = ctx.signal.aborted || caller.isEnded ? 'hangup' : how;
      const served = entry.moves.state === 'service' || entry.qc.status === 'service';
      await this.leave(entry, end);
      // how the caller left, for what runs next (TwiML <Enqueue action>: QueueResult, QueueTime)
      ctx.vars.set('svc.queuecall.result', end === 'hangup' ? 'hangup' : served || end === 'service_over' ? 'bridged' : 'leave');
      if (end === 'leave') ctx.note('queue_leave', { queuecall_id: qc.id });
      const waitedUntil = entry.qc.tm_service ? entry.qc.tm_service.getTime() : Date.now();
      ctx.vars.set('svc.queuecall.wait_seconds', String(Math.max(0, Math.round((waitedUntil - entry.waitingSince) / 1000))));
      ctx.vars.set('svc.queuecall.queue_sid', toSid('QU', queue.id));
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      if (!entry.moves.ended) entry.moves.move('ended', 'the join returns');
      entry.wait.abort();
      await entry.audio;
      this.entries.delete(qc.id);
    }
    if (ctx.signal.aborted) throw abortError(ctx.signal);
    if (caller.isEnded) return { kind: 'end', reason: 'call_hangup' };
    return NEXT;
  }

  /** A join refused because the queue holds its max_size: Twilio's QueueResult=queue-full (warning 14207); the flow goes on. */
  private full(ctx: ActionContext, queue: QueueRow): Outcome {
    ctx.vars.set('svc.queuecall.result', 'queue-full');
    ctx.vars.set('svc.queuecall.wait_seconds', '0');
    ctx.vars.set('svc.queuecall.queue_sid', toSid('QU', queue.id));
    ctx.note('queue_full', { queue_id: queue.id, max_size: queue.max_size });
    return NEXT;
  }

  /**
   * TwiML <Enqueue waitUrl>: the wait document loops (media-app/twiml/wait-document.ts) with Twilio's
   * queue parameters; its <Leave> takes the caller out of the queue (the Enqueue action then gets
   * QueueResult=leave), its <Hangup> hangs the caller up. Never rejects.
   */
  private async waitDocument(e: Entry, doc: { url: string; method: 'GET' | 'POST' }, signal: AbortSignal): Promise<void> {
    const params = async (): Promise<Record<string, string>> => {
      const [waiting, queue] = await Promise.all([queuecallsRepo(this.db).waitingIn(e.queue.id), queuesRepo(this.db).get(null, e.queue.id)]);
      const now = Date.now();
      const max = (queue ?? e.queue).max_size;
      const waits = waiting.map((q) => Math.max(0, Math.round((now - q.tm_create.getTime()) / 1000)));
      const position = waiting.findIndex((q) => q.id === e.qc.id) + 1;
      return {
        QueueSid: toSid('QU', e.queue.id),
        QueuePosition: String(position > 0 ? position : waiting.length + 1),
        QueueTime: String(Math.max(0, Math.round((now - e.waitingSince) / 1000))),
        AvgQueueTime: String(waits.length ? Math.round(waits.reduce((a, b) => a + b, 0) / waits.length) : 0),
        CurrentQueueSize: String(waiting.length),
        // the cap as it is now (Queues MaxSize); a queue without one (a /v1.0 queue made so) sends none
        ...(max !== null ? { MaxQueueSize: String(max) } : {}),
      };
    };
    try {
      const how = await playWaitDocument(e.ctx, e.ctx.call!, { url: doc.url, method: doc.method, kind: 'queue', params }, signal);
      if (how === 'leave' && e.moves.state !== 'service') e.end('leave');
      if (how === 'hangup') await e.caller.hangup('normal');
    } catch (err) {
      if (!signal.aborted) this.log.warn({ err: (err as Error).message, queuecall: e.qc.id }, 'queue wait document stopped');
    }
  }

  /** The node's ringback tone on the caller's endpoint, stopped when the signal aborts. */
  private async ringback(caller: CallSession, signal: AbortSignal): Promise<void> {
    const ep = caller.endpoint;
    if (!ep || caller.isEnded || signal.aborted) return;
    const stop = () => void ep.stopPlayback().catch(() => undefined);
    signal.addEventListener('abort', stop, { once: true });
    try {
      await ep.play(RINGBACK_TONE);
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  private get host(): DequeueHost {
    return { factory: this.factory, publisher: this.publisher, entries: this.entries, move: (qc, to, extra, from) => this.move(qc, to, extra, from), events: this };
  }

  /** The queue_dequeue action (TwiML <Dial><Queue>): see dequeue.ts. */
  dequeue(ctx: ActionContext, queueId: string, opts: DequeueOptions): Promise<Outcome> {
    return dequeueCaller(this.host, ctx, queueId, opts);
  }

  /** Another node's <Dial><Queue> for a caller waiting here, through a PBX leg: see dequeue-leg.ts. */
  takeThroughLeg(c: PbxLegClaims, req: SrfRequest, res: SrfResponse): Promise<void> {
    return takeThroughLeg(this.host, c, req, res);
  }

  /** The kick command (idempotent: an unknown or ended queuecall is left alone). */
  async kick(queuecallId: string): Promise<void> {
    const e = this.entries.get(queuecallId);
    if (!e || e.moves.ended) return;
    const k = await this.move(e.qc, 'kicking');
    if (k) e.qc = k;
    e.end('kick');
  }

  private async move(qc: QueuecallRow, to: QueuecallStatus, extra: Partial<QueuecallRow> = {}, from?: QueuecallStatus[]): Promise<QueuecallRow | null> {
    const row = await queuecallsRepo(this.db).transition(qc.id, to, extra, from);
    if (row) await publishQueuecallStatus(this.publisher, row);
    return row;
  }

  /** Tries every waiting caller of this node again (agents freed elsewhere). */
  private readonly sweep = (): void => {
    if (this.stopped) return;
    for (const e of this.entries.values()) if (e.moves.state === 'waiting' && !e.dispatching) void this.dispatch(e);
    this.tick = this.timers.set(DISPATCH_INTERVAL_MS, this.sweep);
  };

  private async dispatch(e: Entry): Promise<void> {
    if (e.moves.state !== 'waiting' || e.dispatching || this.stopped) return;
    e.dispatching = true;
    try {
      const now = Date.now();
      for (const [id, until] of e.skip) if (until <= now) e.skip.delete(id);
      const agent = await claimAgent(this.db, this.publisher, e.qc.customer_id, e.queue.tag_ids ?? [], [...e.skip.keys()]);
      if (!agent) return;
      if (e.moves.state !== 'waiting') {
        await setAgentStatus(this.db, this.publisher, agent.id, 'available', ['ringing']);
        return;
      }
      const connecting = await this.move(e.qc, 'connecting', { service_agent_id: agent.id }, ['waiting']);
      // the caller left while the row moved: its leave closes the record
      if (!connecting || !e.moves.move('connecting', 'an agent is claimed')) {
        await setAgentStatus(this.db, this.publisher, agent.id, 'available', ['ringing']);
        return;
      }
      e.qc = connecting;
      e.ringing = ringAgent(this.factory, e.caller, agent);
      this.emit('ringing', { queuecallId: e.qc.id, agentId: agent.id });
      const leg = await e.ringing.answered;
      e.ringing = null;
      if (!leg || !e.moves.is('connecting')) {
        if (leg) await leg.hangup('normal');
        await setAgentStatus(this.db, this.publisher, agent.id, 'available', ['ringing']);
        if (e.moves.is('connecting')) {
          const back = await this.move(e.qc, 'waiting', { service_agent_id: EMPTY_UUID }, ['connecting']);
          // (a caller who left meanwhile stays ended: its leave closes the record)
          const moved = e.moves.move('waiting', 'the agent did not answer');
          if (back && moved) e.qc = back;
          e.skip.set(agent.id, Date.now() + UNANSWERED_COOLDOWN_MS);
        }
        return;
      }
      await this.serve(e, leg, agent.id);
    } catch (err) {
      this.log.warn({ err: (err as Error).message, queuecall: e.qc.id }, 'queue dispatch failed');
    } finally {
      e.dispatching = false;
    }
  }

  /** The agent answered: the wait audio stops, the two are bridged until one leaves. */
  private async serve(e: Entry, leg: CallSession, agentId: string): Promise<void> {
    e.agentLeg = leg;
    e.wait.abort();
    await e.caller.endpoint?.stopPlayback().catch(() => undefined);
    const now = new Date();
    const svc = await startService(this.db, this.publisher, e.qc.id, agentId, { tm_service: now, duration_waiting: now.getTime() - e.waitingSince });
    if (!svc || e.caller.isEnded || !e.moves.move('service', 'the agent answered')) {
      await leg.hangup('normal');
      // undone as far as it went: busy when the service was written, still ringing when it was not
      await setAgentStatus(this.db, this.publisher, agentId, 'available', [svc ? 'busy' : 'ringing']);
      return;
    }
    e.qc = svc;
    await queuesRepo(this.db).bump(e.queue.id, 'total_serviced_count');
    // the caller's flow waits on the bridge: when the agent's side leaves, the caller goes on
    let bridge: Bridge;
    try {
      bridge = await Bridge.open(e.caller, leg, { kind: 'return_to_flow', owner: e.caller }, this.log);
    } catch (err) {
      // a side ended (or lost its media) before the two were joined: the service is over
      this.log.warn({ err: (err as Error).message, queuecall: e.qc.id }, 'queue bridge not opened');
      await leg.hangup('normal');
      await setAgentStatus(this.db, this.publisher, agentId, 'available', ['busy']);
      return e.end('service_over');
    }
    // the service timeout ends the agent's side (whoever a transfer put there) while the bridge lasts
    await e.moves.serveBridge(bridge.ended, e.queue.service_timeout, () => void bridge.other(e.caller)?.hangup('normal'));
    await setAgentStatus(this.db, this.publisher, agentId, 'available', ['busy']);
    e.end('service_over');
  }

  /** Closes the record when the caller leaves: done after service, abandoned otherwise. */
  private async leave(e: Entry, how: EndHow | 'hangup'): Promise<void> {
    const wasService = e.moves.state === 'service' || e.qc.status === 'service';
    e.moves.move('ended', `the caller leaves (${how})`);
    e.wait.abort();
    e.ringing?.cancel();
    if (e.agentLeg && !e.agentLeg.isEnded) await e.agentLeg.hangup('normal');
    // a dequeue's bridge: the dequeuing call's flow goes on (its Dial action)
    if (e.bridge && e.bridge.state !== 'closed') await e.bridge.close().catch(() => undefined);
    const now = Date.now();
    const current = (await queuecallsRepo(this.db).get(null, e.qc.id, { includeDeleted: true })) ?? e.qc;
    const served = wasService || current.status === 'service' || (current.status === 'kicking' && current.tm_service !== null);
    const extra: Partial<QueuecallRow> = { tm_end: new Date(now) };
    if (served && current.tm_service) extra.duration_service = now - current.tm_service.getTime();
    else extra.duration_waiting = now - e.waitingSince;
    const row = await this.move(current, served ? 'done' : 'abandoned', extra);
    if (row) e.qc = row;
    if (!served) await queuesRepo(this.db).bump(e.queue.id, 'total_abandoned_count');
    this.log.debug({ queuecall: e.qc.id, how, status: e.qc.status }, 'queuecall ended');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timers.clear(this.tick);
    for (const e of this.entries.values()) e.end('kick');
  }
}
