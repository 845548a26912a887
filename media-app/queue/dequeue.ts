/**
 * queue_dequeue (TwiML <Dial><Queue>): the dequeuing call takes the oldest caller waiting in a queue
 * on this node and is bridged to it, as Twilio's <Dial><Queue> does.
 *
 * The caller is claimed with the dispatcher's own compare-and-set (queuecall waiting → connecting),
 * so the queue's agent dispatch never rings an agent for it at the same time. With a whisper URL the
 * caller's wait audio stops and it hears that document once (Play, Say, Pause, Redirect), fetched
 * signed by the caller's flow with QueueSid, CallSid (the caller), QueueTime and DequeingCallSid;
 * then connecting → service and the two are bridged (the call core's Bridge, rule return_both: when
 * the dequeuing side leaves, the caller's flow goes on, its Enqueue action with QueueResult=bridged;
 * when the caller leaves, the dequeuing call's flow goes on, its Dial action with completed). A dequeuing call that leaves during the whisper puts the caller back to
 * waiting (its wait audio again); a caller that leaves during it ends the dequeue with no-answer.
 * With an empty queue it waits for the next caller to join, up to `timeoutMs` (svc.dequeue.status
 * no-answer).
 *
 * A caller waiting on another node (none waiting here) is taken through a PBX leg to that node
 * (dequeue-leg.ts): that node claims it, whispers to it and bridges it to the leg; this node bridges
 * the dequeuing call to the leg (docs/queues.md).
 */
import { EventEmitter } from 'node:events';
import type { EventPublisher } from '../../core/events/bus';
import { queuesRepo } from '../../core/repos/queues';
import { queuecallsRepo, type QueuecallRow, type QueuecallStatus } from '../../core/repos/queuecalls';
import { callSid, toSid } from '../../core/twilio/sids';
import { Bridge } from '../call/bridge';
import type { CallFactory } from '../call/factory';
import type { CallSession } from '../call/session';
import { type ActionContext, NEXT, type Outcome } from '../flow/actions/base';
import { abortError } from '../kit/clock';
import { playWaitDocument } from '../twiml/wait-document';
import type { Entry, QueueServiceEvents } from './service';
import { dialPbxLeg } from '../xnode/pbx-leg';
import { pbxLegDeps } from '../pbx/remote';

/** How often an empty queue is looked at again besides a caller's `waiting` event (callers put back to waiting). */
const RECHECK_MS = 500;

export interface DequeueOptions {
  whisper?: { url: string; method: 'GET' | 'POST' };
  timeoutMs: number;
}

/** What the queue service lends a dequeue. */
export interface DequeueHost {
  factory: CallFactory;
  publisher: EventPublisher;
  entries: ReadonlyMap<string, Entry>;
  move(qc: QueuecallRow, to: QueuecallStatus, extra?: Partial<QueuecallRow>, from?: QueuecallStatus[]): Promise<QueuecallRow | null>;
  events: EventEmitter<QueueServiceEvents>;
}

export type Served = { queueTime: number } | null;

/** Claims a caller of this node waiting in the queue (waiting → connecting); false when it is not waiting (any more). */
export async function claimEntry(h: DequeueHost, e: Entry): Promise<boolean> {
  if (e.moves.state !== 'waiting') return false;
  const moved = await h.move(e.qc, 'connecting', {}, ['waiting']);
  if (!moved) return false;
  if (!e.moves.is('waiting')) return false; // it left meanwhile: its leave closes the record
  if (!e.moves.move('connecting', 'a dequeue claims it')) return false;
  e.qc = moved;
  return true;
}

/** The oldest caller of this node waiting in the queue, claimed, or null; `rows` the queue's waiting queuecalls. */
async function claim(h: DequeueHost, rows: QueuecallRow[]): Promise<Entry | null> {
  for (const row of rows) {
    const e = h.entries.get(row.id);
    if (row.status !== 'waiting' || !e) continue;
    if (await claimEntry(h, e)) return e;
  }
  return null;
}

/** Resolves on the next caller's wait, after RECHECK_MS, or when `signal` aborts. */
function nextChance(h: DequeueHost, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      h.events.off('waiting', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, RECHECK_MS);
    h.events.on('waiting', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Puts a claimed caller back to waiting (the dequeuing side left before the bridge). */
export async function putBack(h: DequeueHost, e: Entry): Promise<void> {
  if (e.moves.state !== 'connecting') return;
  const back = await h.move(e.qc, 'waiting', {}, ['connecting']);
  if (back) e.qc = back;
  // a caller who left meanwhile stays ended: no wait audio after its queue_join returned
  if (e.moves.move('waiting', 'the dequeue left before the bridge')) e.startWait();
}

/** Stops the claimed caller's wait audio and plays it the whisper document once (fetched by its own flow). */
export async function whisperTo(e: Entry, whisper: DequeueOptions['whisper'], dequeuerId: string, signal: AbortSignal, note: ActionContext['note']): Promise<void> {
  e.wait.abort();
  await e.audio;
  await e.caller.endpoint?.stopPlayback().catch(() => undefined);
  if (!whisper || !e.ctx.call) return;
  const params = async () => ({ QueueSid: toSid('QU', e.queue.id), QueueTime: String(Math.round((Date.now() - e.waitingSince) / 1000)), DequeingCallSid: callSid(dequeuerId) });
  const sig = AbortSignal.any([e.ctx.signal, signal]);
  await playWaitDocument(e.ctx, e.ctx.call, { ...whisper, kind: 'whisper', once: true, params }, sig).catch((err: Error) => note('dequeue_whisper_failed', { message: err.message }));
}

/** The claimed caller into service (connecting → service); its queue time in seconds, or null when it left first. */
export async function toService(h: DequeueHost, e: Entry): Promise<number | null> {
  const now = new Date();
  const svc =
    e.moves.state === 'connecting' && !e.caller.isEnded && !e.ctx.signal.aborted
      ? await h.move(e.qc, 'service', { tm_service: now, duration_waiting: now.getTime() - e.waitingSince }, ['connecting'])
      : null;
  if (!svc || !e.moves.move('service', 'dequeued')) return null;
  e.qc = svc;
  await queuesRepo(h.factory.deps.db).bump(e.queue.id, 'total_serviced_count');
  return Math.round((svc.duration_waiting ?? 0) / 1000);
}

/** Whispers to the claimed caller, then bridges the two until one leaves; null when it was lost first. */
async function serve(h: DequeueHost, ctx: ActionContext, me: CallSession, e: Entry, o: DequeueOptions): Promise<Served> {
  await whisperTo(e, o.whisper, me.id, ctx.signal, ctx.note.bind(ctx));
  if (ctx.signal.aborted || me.isEnded) {
    await putBack(h, e);
    return null;
  }
  const queueTime = await toService(h, e);
  if (queueTime === null) return null;
  try {
    e.bridge = await Bridge.open(e.caller, me, { kind: 'return_both' }, h.factory.deps.logger);
  } catch (err) {
    h.factory.deps.logger.warn({ err: (err as Error).message, queuecall: e.qc.id }, 'dequeue bridge not opened');
    e.end('service_over');
    return { queueTime };
  }
  await e.bridge.ended;
  e.end('service_over');
  return { queueTime };
}

/**
 * What refused a dequeue's legs, remembered for its lifetime: each pass (a `waiting` event, every
 * RECHECK_MS) would dial them again, up to 6 INVITEs a second until its timeout. A row is tried again
 * only once it changed (its tm_update: put back to waiting, say); a node found lost is not dialled again.
 */
interface Refused {
  rows: Map<string, number>;
  nodes: Set<string>;
}

const versionOf = (r: QueuecallRow): number => new Date(r.tm_update ?? 0).getTime();

/** Where the asking node leaves a dequeue's whisper for the holding node (the leg's signed detail has no room for a URL). */
export const dequeueWhisperKey = (dequeuerId: string): string => `dequeue-whisper:${dequeuerId}`;

/**
 * The oldest caller waiting on another node, taken through a PBX leg to that node (dequeue-leg.ts is
 * that node's end): bridged to the leg until one side leaves. 'none' when no caller elsewhere could be
 * taken (none waits, or each asked was taken or gone meanwhile): the dequeue goes on waiting.
 */
async function takeRemote(h: DequeueHost, ctx: ActionContext, me: CallSession, rows: QueuecallRow[], o: DequeueOptions, waiting: AbortSignal, refused: Refused): Promise<Served | 'none'> {
  const deps = h.factory.deps;
  const elsewhere = rows.filter(
    (r) => r.status === 'waiting' && r.node_id && r.node_id !== deps.calls.nodeId && !h.entries.has(r.id) && !refused.nodes.has(r.node_id) && refused.rows.get(r.id) !== versionOf(r),
  );
  for (const row of elsewhere.slice(0, 3)) {
    if (waiting.aborted || me.isEnded) return 'none';
    const key = deps.config.redisKeyPrefix + dequeueWhisperKey(me.id);
    // (none: an earlier dequeue's whisper left by this call must not play)
    if (o.whisper) await deps.redis.set(key, JSON.stringify(o.whisper), 'EX', 60);
    else await deps.redis.del(key);
    // the dequeuing call leaving (its flow's signal) CANCELs the leg: the caller's node puts the caller back to waiting
    const out = await dialPbxLeg(pbxLegDeps(deps), row.node_id, { kind: 'dequeue', customerId: ctx.customerId, subjectId: row.id, callId: me.id, detail: '' }, me.endpoint, ctx.signal);
    if (!out.ok) {
      deps.logger.info({ call: me.id, queuecall: row.id, node: row.node_id, why: out.message }, 'dequeue leg not up');
      if (ctx.signal.aborted || me.isEnded) return 'none';
      if (out.lost) refused.nodes.add(row.node_id);
      else refused.rows.set(row.id, versionOf(row));
      continue;
    }
    try {
      // the caller's node bridged the caller to the leg: either side leaving ends the leg, the dequeuing call's flow goes on
      const bridge = await Bridge.open(me, out.leg, { kind: 'return_to_flow', owner: me }, deps.logger);
      await bridge.ended;
    } catch (err) {
      deps.logger.info({ err: (err as Error).message, call: me.id }, 'dequeue leg up, but the dequeuing call left first');
    }
    if (!out.leg.isEnded) await out.leg.hangup();
    const qc = await queuecallsRepo(deps.db).get(null, row.id);
    return { queueTime: Math.round((qc?.duration_waiting ?? 0) / 1000) };
  }
  return 'none';
}

export async function dequeueCaller(h: DequeueHost, ctx: ActionContext, queueId: string, o: DequeueOptions): Promise<Outcome> {
  if (ctx.referenceType !== 'call' || !ctx.call) return { kind: 'fail', message: 'queue_dequeue needs a call' };
  const me = h.factory.get(ctx.referenceId);
  if (!me || me.isEnded) return { kind: 'end', reason: 'call_hangup' };
  const queue = await queuesRepo(h.factory.deps.db).get(ctx.customerId, queueId);
  if (!queue) return { kind: 'fail', message: `queue ${queueId} not found` };
  await ctx.call.prepareMedia(ctx.signal);
  ctx.vars.set('svc.dequeue.queue_sid', toSid('QU', queue.id));
  // the timeout bounds the wait for a caller only: a claimed caller is whispered to and bridged
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), o.timeoutMs);
  const waiting = AbortSignal.any([timeout.signal, ctx.signal]);
  let served: Served = null;
  const refused: Refused = { rows: new Map(), nodes: new Set() };
  try {
    while (!waiting.aborted && !served) {
      const rows = await queuecallsRepo(h.factory.deps.db).waitingIn(queue.id);
      const e = await claim(h, rows);
      if (e) {
        clearTimeout(timer);
        // a caller who left before the bridge ends the Dial too (no-answer), as its timeout is spent
        served = await serve(h, ctx, me, e, o);
        break;
      }
      // none here: the oldest waiting on another node, through a leg to it
      const remote = await takeRemote(h, ctx, me, rows, o, waiting, refused);
      if (remote !== 'none') {
        served = remote;
        break;
      }
      await nextChance(h, waiting);
    }
  } finally {
    clearTimeout(timer);
  }
  if (ctx.signal.aborted) throw abortError(ctx.signal);
  if (me.isEnded) return { kind: 'end', reason: 'call_hangup' };
  ctx.vars.set('svc.dequeue.status', served ? 'completed' : 'no-answer');
  ctx.vars.set('svc.dequeue.queue_time', String(served?.queueTime ?? 0));
  return NEXT;
}
