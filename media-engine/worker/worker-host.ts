/**
 * The API thread's handle on one media worker thread: request/response by id, events by target,
 * fork frames by fork id (a tick's frames in one message; acknowledgements and injected audio batched
 * per turn of the event loop: frame-batch.ts). Works from TypeScript sources (tests, tsx) and from compiled JavaScript.
 * Requests and events are the closed union of protocol.ts; a message outside it is refused.
 */
import { EventEmitter } from 'node:events';
import type { TransferListItem, Worker } from 'node:worker_threads';
import { workerBeside } from '../../core/files/worker-file';
import { CountBatch, FrameBatch } from './frame-batch';
import { isFromWorker, type EventMessage, type Method, type Params, type ParamsAfterTarget, type Result, type ToWorker } from './protocol';

export class WorkerCallError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface WorkerHostEvents {
  /** an event of one of this worker's legs or conferences */
  event: [EventMessage];
  /** the thread is gone (crash, exit or kill); its pending calls were failed with `error` */
  exit: [WorkerCallError];
}

export class WorkerHost extends EventEmitter<WorkerHostEvents> {
  private readonly worker: Worker;
  private nextId = 1;
  private pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly ready: Promise<void>;
  private dead = false;
  legCount = 0;
  /** the thread's Linux thread id, from its ready message (undefined off Linux) */
  tid: number | undefined;
  /** frames from forks, by fork id */
  readonly forkSinks = new Map<string, (frame: Int16Array) => void>();
  /** forks told when an injection that starts went out (its first frame's Date.now()), by fork id */
  readonly forkStarts = new Map<string, (at: number) => void>();
  /** fork acknowledgements and injected audio waiting for the end of this turn of the event loop */
  private readonly acks = new CountBatch();
  private readonly injects = new FrameBatch(320 * 16);
  private flushDue = false;

  constructor(
    readonly index: number,
    workerData: unknown = {},
  ) {
    super();
    this.worker = workerBeside(__filename, 'worker-main', workerData);
    this.ready = new Promise((resolve, reject) => {
      const onMsg = (m: unknown) => {
        if (isFromWorker(m) && m.t === 'ready') {
          this.tid = m.tid;
          this.worker.off('error', reject);
          resolve();
        }
      };
      this.worker.once('message', onMsg);
      this.worker.once('error', reject);
    });
    this.worker.on('message', (m: unknown) => this.onMessage(m));
    this.worker.on('error', (e) => this.fail(new WorkerCallError(`media worker ${index} crashed: ${e.message}`, 'EWORKERGONE')));
    this.worker.on('exit', (code) => this.fail(new WorkerCallError(`media worker ${index} exited (code ${code}); its endpoints are gone`, 'EWORKERGONE')));
  }

  private onMessage(m: unknown): void {
    if (!isFromWorker(m)) {
      process.emitWarning(`media worker ${this.index}: refused a message outside the protocol`);
      return;
    }
    if (m.t === 'reply') {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(new WorkerCallError(m.error.message, m.error.code));
    } else if (m.t === 'event') {
      this.emit('event', m);
    } else if (m.t === 'forks') {
      // one tick's frames of every fork: each consumer gets a view of its frame (the array is this thread's)
      let off = 0;
      for (let i = 0; i < m.forkIds.length; i++) {
        const n = m.sizes[i]!;
        this.forkSinks.get(m.forkIds[i]!)?.(m.samples.subarray(off, off + n));
        off += n;
      }
    } else if (m.t === 'forkStarted') {
      this.forkStarts.get(m.forkId)?.(m.at);
    }
  }

  /** Acknowledges one frame of a fork: sent with the others of this turn of the event loop. */
  forkAck(forkId: string): void {
    if (this.dead) return;
    this.acks.add(forkId);
    this.flushSoon();
  }

  /** Audio a fork's consumer plays back (copied at once): sent with the others of this turn of the event loop, in order. */
  inject(forkId: string, samples: Int16Array, rate: 8000 | 16000): void {
    if (this.dead) return;
    this.injects.add(forkId, samples, rate);
    this.flushSoon();
  }

  private flushSoon(): void {
    if (this.flushDue) return;
    this.flushDue = true;
    queueMicrotask(() => this.flush());
  }

  /** Sends the acknowledgements and injections batched so far (before any other message, so the order holds). */
  private flush(): void {
    this.flushDue = false;
    if (this.dead) return;
    const a = this.acks.take();
    if (a) this.worker.postMessage({ t: 'forkAcks', forkIds: a.ids, counts: a.counts } satisfies ToWorker);
    const b = this.injects.take();
    if (b) {
      const m: ToWorker = { t: 'injects', forkIds: b.ids, sizes: b.sizes, rates: b.tags.map((r) => (r === 16000 ? 16000 : 8000)), samples: b.samples };
      this.worker.postMessage(m, [b.samples.buffer as ArrayBuffer]);
    }
  }

  private fail(e: WorkerCallError): void {
    if (this.dead) return;
    this.dead = true;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.emit('exit', e);
  }

  get alive(): boolean {
    return !this.dead;
  }

  /** Runs one Engine operation in the worker: its parameters in, its result out, both checked here. */
  call<M extends Method>(method: M, ...args: Params<M>): Promise<Result<M>> {
    return this.request(method, args);
  }

  /** The same, on one leg or conference: `target` is the operation's first parameter. */
  callOn<M extends Method>(method: M, target: string, ...args: ParamsAfterTarget<M>): Promise<Result<M>> {
    return this.request(method, [target, ...args]);
  }

  private request<M extends Method>(method: M, args: readonly unknown[]): Promise<Result<M>> {
    if (this.dead) return Promise.reject(new WorkerCallError('media worker is not running', 'EWORKER'));
    const id = this.nextId++;
    return new Promise<Result<M>>((resolve, reject) => {
      // the worker answers request `id` with the result of `method` (protocol.ts); call() and
      // callOn() typed `args` as that operation's parameters
      this.pending.set(id, { resolve: (v) => resolve(v as Result<M>), reject });
      this.post({ t: 'call', id, method, args } as ToWorker);
    });
  }

  post(m: ToWorker, transfer?: TransferListItem[]): void {
    if (this.dead) return;
    if (this.flushDue) this.flush();
    this.worker.postMessage(m, transfer);
  }

  /** Stops the thread at once, as a crash would (operations and tests of crash handling). */
  async kill(): Promise<void> {
    await this.worker.terminate();
  }

  async terminate(): Promise<void> {
    if (!this.dead) {
      try {
        await this.call('shutdown');
      } catch {
        /* already gone */
      }
    }
    this.dead = true;
    await this.worker.terminate();
  }
}
