/**
 * The API thread's handle on one media worker thread: request/response by id, events by target,
 * fork frames by fork id. Works from TypeScript sources (tests, tsx) and from compiled JavaScript.
 */
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { Worker, type TransferListItem } from 'node:worker_threads';
import type { FromWorker, ToWorker } from './protocol';

export class WorkerCallError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
  }
}

export class WorkerHost extends EventEmitter {
  private readonly worker: Worker;
  private nextId = 1;
  private pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly ready: Promise<void>;
  private dead = false;
  legCount = 0;
  /** frames from forks, by fork id */
  readonly forkSinks = new Map<string, (frame: Int16Array) => void>();

  constructor(readonly index: number, workerData: unknown = {}) {
    super();
    const entry = path.join(__dirname, `worker-main${path.extname(__filename)}`);
    this.worker = entry.endsWith('.ts')
      ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(entry)});`, { eval: true, workerData })
      : new Worker(entry, { workerData });
    this.ready = new Promise((resolve, reject) => {
      const onMsg = (m: FromWorker) => {
        if (m.t === 'ready') {
          this.worker.off('error', reject);
          resolve();
        }
      };
      this.worker.once('message', onMsg);
      this.worker.once('error', reject);
    });
    this.worker.on('message', (m: FromWorker) => this.onMessage(m));
    this.worker.on('error', (e) => this.fail(new WorkerCallError(`media worker ${index} crashed: ${e.message}`, 'EWORKERGONE')));
    this.worker.on('exit', (code) => this.fail(new WorkerCallError(`media worker ${index} exited (code ${code}); its endpoints are gone`, 'EWORKERGONE')));
  }

  private onMessage(m: FromWorker): void {
    if (m.t === 'reply') {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(new WorkerCallError(m.error.message, m.error.code));
    } else if (m.t === 'event') {
      this.emit('event', m.target, m.name, m.data);
    } else if (m.t === 'fork') {
      this.forkSinks.get(m.forkId)?.(m.frame);
    }
  }

  private fail(e: Error): void {
    if (this.dead) return;
    this.dead = true;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.emit('exit', e);
  }

  get alive(): boolean {
    return !this.dead;
  }

  call<T = unknown>(method: string, ...args: unknown[]): Promise<T> {
    if (this.dead) return Promise.reject(new WorkerCallError('media worker is not running', 'EWORKER'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.post({ t: 'call', id, method, args });
    });
  }

  post(m: ToWorker, transfer?: TransferListItem[]): void {
    if (!this.dead) this.worker.postMessage(m, transfer);
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
