/**
 * The command bus: control-api → media-app over BullMQ (core/commands/contracts.ts). Originate and
 * activeflow starts go to the shared queue every node consumes; a command for a live call goes to
 * the queue of the node that owns it (call → node in Redis, node alive by heartbeat). The
 * commandId is the BullMQ jobId, so enqueueing the same command twice queues it once. A command that
 * does not match the closed union of ./protocol.ts is refused (CommandRefusedError) before anything is
 * enqueued; media-app checks every job again on its side.
 *
 * BullMQ prefix: `${REDIS_KEY_PREFIX}bull` (the same one control-api's jobs use); the call → node
 * and heartbeat keys are read under REDIS_KEY_PREFIX.
 */
import { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { ApiError, serviceUnavailable } from '../errors';
import { newId } from '../ids';
import { clock } from '../clock';
import { ORIGINATE_QUEUE, callNodeKey, nodeAliveKey, nodeQueueName } from './contracts';
import { injectContext } from '../tracing';
import { CommandRefusedError, checkCommand, checkEnvelope, type Command, type CommandEnvelope, type CommandOf } from './protocol';

export type ActiveflowStartCommand = CommandOf<'activeflow.start'>;
export type BusCommand = Command;
export type BusEnvelope = CommandEnvelope;

/** Redis key (under the prefix) of the node running an activeflow that has no call (reference api…). */
export const activeflowNodeKey = (activeflowId: string): string => `activeflow-node:${activeflowId}`;

export interface CommandBusOptions {
  /** Shared connection (BullMQ does not close a connection it was given). */
  redis: Redis;
  /** REDIS_KEY_PREFIX. */
  keyPrefix: string;
}

export class CommandBus {
  private readonly queues = new Map<string, Queue>();
  private readonly events = new Map<string, Promise<OpenEvents>>();
  private closed = false;

  constructor(private readonly opts: CommandBusOptions) {}

  /** The BullMQ prefix consumers must use. */
  get bullPrefix(): string {
    return `${this.opts.keyPrefix}bull`;
  }

  queue(name: string): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.opts.redis, prefix: this.bullPrefix });
      // A broken connection surfaces as a failed add (503), not as an unhandled error event.
      q.on('error', () => undefined);
      this.queues.set(name, q);
    }
    return q;
  }

  /**
   * The events of a queue (completed, failed...), for a caller that waits for its job's answer rather
   * than polling it. One per queue, on a connection of its own (it blocks reading the queue's event
   * stream), reading from the stream's last entry as of its creation, so no job added once this
   * resolves has its events missed. Closed with the bus.
   */
  queueEvents(name: string): Promise<QueueEvents> {
    if (this.closed) return Promise.reject(serviceUnavailable());
    let e = this.events.get(name);
    if (!e) {
      const opening = this.openEvents(name);
      opening.catch(() => this.events.get(name) === opening && this.events.delete(name));
      this.events.set(name, opening);
      e = opening;
    }
    return e.then((o) => o.events);
  }

  private async openEvents(name: string): Promise<OpenEvents> {
    const stream = this.queue(name).keys.events;
    let lastEventId: string;
    try {
      const last = await this.opts.redis.xrevrange(stream, '+', '-', 'COUNT', 1);
      lastEventId = last[0]?.[0] ?? '0-0';
    } catch {
      throw serviceUnavailable();
    }
    // BullMQ does not close a connection it was given: closeEvents does
    const connection = this.opts.redis.duplicate({ maxRetriesPerRequest: null });
    const open: OpenEvents = { events: new QueueEvents(name, { connection, prefix: this.bullPrefix, lastEventId }), connection };
    open.events.on('error', () => undefined);
    // every waiting caller listens for its own job: as many listeners as jobs waited for at once
    open.events.setMaxListeners(0);
    try {
      await open.events.waitUntilReady();
    } catch {
      await closeEvents(open);
      throw serviceUnavailable();
    }
    return open;
  }

  /** Enqueues one command; throws CommandRefusedError, enqueueing nothing, unless it is a valid command. */
  async enqueue(queueName: string, command: BusCommand, commandId = newId()): Promise<BusEnvelope> {
    // the sender's trace (core/tracing) goes with the command: media-app's spans join it
    const { traceparent, tracestate } = injectContext();
    const trace = traceparent ? { traceparent, ...(tracestate ? { tracestate } : {}) } : undefined;
    const checked = checkEnvelope({ commandId, issuedAt: clock.now().toISOString(), command, ...(trace ? { trace } : {}) });
    if (!checked.ok) throw new CommandRefusedError(`command refused: ${checked.reason}`);
    if (this.closed) throw serviceUnavailable();
    const envelope = checked.value;
    try {
      await this.queue(queueName).add(command.type, envelope, {
        jobId: commandId,
        attempts: 3,
        backoff: { type: 'fixed', delay: 200 },
        removeOnComplete: 1000,
        removeOnFail: 5000,
      });
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw serviceUnavailable();
    }
    return envelope;
  }

  originate(callIds: string[], customerId: string, commandId?: string): Promise<BusEnvelope> {
    return this.enqueue(ORIGINATE_QUEUE, { type: 'call.originate', callIds, customerId }, commandId);
  }

  startActiveflow(activeflowId: string, customerId: string, commandId?: string): Promise<BusEnvelope> {
    return this.enqueue(ORIGINATE_QUEUE, { type: 'activeflow.start', activeflowId, customerId }, commandId);
  }

  /** The live node that owns a call, or null (no owner, or its heartbeat expired). */
  async callOwner(callId: string): Promise<string | null> {
    return this.liveNode(callNodeKey(callId));
  }

  async activeflowOwner(activeflowId: string): Promise<string | null> {
    return this.liveNode(activeflowNodeKey(activeflowId));
  }

  /** Sends a live-call command to the owner's queue; null when no live node owns the call. */
  async toCallOwner(command: Extract<Command, { callId: string }>, commandId?: string): Promise<BusEnvelope | null> {
    const checked = checkCommand(command);
    if (!checked.ok) throw new CommandRefusedError(`command refused: ${checked.reason}`);
    const node = await this.callOwner(command.callId);
    if (!node) return null;
    return this.enqueue(nodeQueueName(node), command, commandId);
  }

  async toNode(nodeId: string, command: BusCommand, commandId?: string): Promise<BusEnvelope> {
    return this.enqueue(nodeQueueName(nodeId), command, commandId);
  }

  private async liveNode(key: string): Promise<string | null> {
    let node: string | null;
    try {
      node = await this.opts.redis.get(this.opts.keyPrefix + key);
      if (!node) return null;
      const alive = await this.opts.redis.exists(this.opts.keyPrefix + nodeAliveKey(node));
      return alive ? node : null;
    } catch {
      throw serviceUnavailable();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const qs = [...this.queues.values()];
    const es = [...this.events.values()];
    this.queues.clear();
    this.events.clear();
    await Promise.all(es.map((e) => e.then(closeEvents, () => undefined)));
    await Promise.all(qs.map((q) => q.close().catch(() => undefined)));
  }
}

interface OpenEvents {
  events: QueueEvents;
  connection: Redis;
}

async function closeEvents(o: OpenEvents): Promise<void> {
  await o.events.close().catch(() => undefined);
  o.connection.disconnect();
}

export type { CommandEnvelope };
export { CommandRefusedError };
