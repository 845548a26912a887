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
 * Callers waiting on another node are not taken (their call and media are there): the dequeue waits
 * for a caller on its own node (docs/queues.md).
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

type Served = { queueTime: number } | null;

/** The oldest caller of this node waiting in the queue, claimed (waiting → connecting), or null. */
async function claim(h: DequeueHost, queueId: string): Promise<Entry | null> {
  for (const row of await queuecallsRepo(h.factory.deps.db).waitingIn(queueId)) {
    const e = h.entries.get(row.id);
    if (row.status !== 'waiting' || !e || e.state !== 'waiting') continue;
    const moved = await h.move(e.qc, 'connecting', {}, ['waiting']);
    if (!moved) continue;
    if (e.state !== 'waiting') return null; // it left meanwhile: its leave closes the record
    e.qc = moved;
    e.state = 'connecting';
    return e;
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
async function putBack(h: DequeueHost, e: Entry): Promise<void> {
  if (e.state !== 'connecting') return;
  const back = await h.move(e.qc, 'waiting', {}, ['connecting']);
  if (back) e.qc = back;
  e.state = 'waiting';
  e.startWait();
}

/** Whispers to the claimed caller, then bridges the two until one leaves; null when it was lost first. */
async function serve(h: DequeueHost, ctx: ActionContext, me: CallSession, e: Entry, o: DequeueOptions): Promise<Served> {
  e.wait.abort();
  await e.audio;
  await e.caller.endpoint?.stopPlayback().catch(() => undefined);
  if (o.whisper && e.ctx.call) {
    const params = async () => ({ QueueSid: toSid('QU', e.queue.id), QueueTime: String(Math.round((Date.now() - e.waitingSince) / 1000)), DequeingCallSid: callSid(me.id) });
    const sig = AbortSignal.any([e.ctx.signal, ctx.signal]);
    await playWaitDocument(e.ctx, e.ctx.call, { ...o.whisper, kind: 'whisper', once: true, params }, sig).catch((err: Error) => ctx.note('dequeue_whisper_failed', { message: err.message }));
  }
  if (ctx.signal.aborted || me.isEnded) {
    await putBack(h, e);
    return null;
  }
  const now = new Date();
  const svc =
    e.state === 'connecting' && !e.caller.isEnded && !e.ctx.signal.aborted
      ? await h.move(e.qc, 'service', { tm_service: now, duration_waiting: now.getTime() - e.waitingSince }, ['connecting'])
      : null;
  if (!svc) return null;
  e.qc = svc;
  e.state = 'service';
  await queuesRepo(h.factory.deps.db).bump(e.queue.id, 'total_serviced_count');
  const queueTime = Math.round((svc.duration_waiting ?? 0) / 1000);
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
  try {
    while (!waiting.aborted && !served) {
      const e = await claim(h, queue.id);
      if (e) {
        clearTimeout(timer);
        // a caller who left before the bridge ends the Dial too (no-answer), as its timeout is spent
        served = await serve(h, ctx, me, e, o);
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
