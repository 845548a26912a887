// The test's side of a test tool on a thread of its own (the lossy relay, a far end that keeps time while the
// test's thread stalls): requests each answered by its id once in force. The worker answers `{ id, req }` with
// `{ t: 'reply', id, error }` (error null: done), and says `{ t: 'fault', error }` when something fails between
// requests (a socket's error): then every later request is refused with it, and end() throws it; once the
// thread has ended (or failed) every request is refused.
import type { Worker } from 'node:worker_threads';

/** What the worker says: an answer, or a failure between requests. */
export type ThreadReply = { t: 'reply'; id: number; error: string | null } | { t: 'fault'; error: string };

/** What the worker is asked. */
export interface ThreadRequest<Req> {
  id: number;
  req: Req;
}

export class ThreadCalls<Req> {
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private nextId = 1;
  /** why nothing more is asked: a failure on the thread, or its end */
  private failure: Error | null = null;

  constructor(
    private readonly worker: Worker,
    /** the tool, in errors: "lossy relay" */
    private readonly what: string,
  ) {
    worker.on('message', (m: ThreadReply) => {
      if (m.t === 'fault') return this.fail(new Error(`${what}: ${m.error}`));
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.error === null) w?.resolve();
      else w?.reject(new Error(`${what}: ${m.error}`));
    });
    worker.on('error', (e) => this.fail(new Error(`${what}: its thread failed: ${e.message}`)));
    worker.on('exit', (code) => this.fail(new Error(`${what}: its thread exited (code ${code})`)));
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
  }

  /** Asks the thread; resolves once it answered done. */
  call(req: Req): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, req } satisfies ThreadRequest<Req>);
    });
  }

  /** Ends the thread (its sockets close with it); throws what failed on it before, if anything did. */
  async end(): Promise<void> {
    const failed = this.failure;
    this.failure ??= new Error(`${this.what}: closed`);
    await this.worker.terminate();
    if (failed) throw failed;
  }
}
