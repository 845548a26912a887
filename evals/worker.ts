/**
 * The evals worker: looks for unclaimed running runs every `pollMs` (one timer, re-armed after each
 * look, cleared by close()), claims up to `maxRuns` at once (a guarded UPDATE: one worker per run, however
 * many workers run) and carries each (runner.ts). A claim is a lease: while it carries runs the worker
 * renews them every `leaseMs / 3` (one timer, armed while it carries a run); each look first ends
 * `failed` the runs whose lease lapsed (a dead worker's; the sweep publishes their eval_run_failed), and a run this worker finds it no longer
 * holds is aborted. close() stops looking, aborts the runs it carries (their calls hang up, the runs
 * end failed) and resolves once they have.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Redis } from 'ioredis';
import type { Db } from '../core/db/knex';
import type { Logger } from '../core/logger';
import { evalRunsRepo } from '../core/repos/eval-runs';
import { evalPinsRepo } from '../core/repos/eval-pins';
import type { EvalsConfig } from './config';
import { carryRun } from './runner';
import { CallEvents } from './call-events';
import { LeaseRenewal } from './lease-renewal';
import { RunEvents } from './run-events';
import { EventPublisher } from '../core/events/bus';
import type { EgressPolicy } from '../core/net';
import type { ObjectStore } from '../core/storage/local';

/** Why a carried run was aborted (runner.ts stopReason): the words its log line and, when it still holds it, its row get. */
export const WORKER_STOPPED = 'the evals worker stopped before the run ended';
export const LEASE_LOST = 'the run lost its lease: at a renewal this worker no longer held its claim (swept as lapsed, or ended elsewhere)';

export class EvalWorker {
  readonly name = `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  private timer: NodeJS.Timeout | null = null;
  /** the lease renewal, armed while a run is carried */
  private readonly renewal: LeaseRenewal;
  private readonly abort = new AbortController();
  private readonly carrying = new Set<Promise<void>>();
  /** the runs carried, by id: each one's own abort (a lost lease) */
  private readonly held = new Map<string, AbortController>();
  private closed = false;
  /** a look is claiming runs: a run ending meanwhile leaves the next look to it */
  private looking = false;

  /** the platform's events, read while a call's observation waits for it to settle */
  private readonly events: CallEvents;
  /** the runs' customer events, on the platform's event stream */
  private readonly runEvents: RunEvents;

  constructor(private readonly deps: { db: Db; redis: Redis; eventStream: string; config: EvalsConfig; logger: Logger; env?: NodeJS.ProcessEnv; egress?: EgressPolicy; storage: ObjectStore }) {
    this.events = new CallEvents({ redis: deps.redis, stream: deps.eventStream, logger: deps.logger });
    this.runEvents = new RunEvents(new EventPublisher(deps.redis, deps.eventStream), deps.logger);
    this.renewal = new LeaseRenewal(Math.floor(deps.config.leaseMs / 3), () => this.renew());
  }

  start(): void {
    this.arm(0);
  }

  private arm(ms: number): void {
    if (!this.closed) this.timer = setTimeout(() => void this.look(), ms);
  }

  /** Claims runs while there is room and a run to claim; errors (the database away) are logged and the next look tries again. */
  private async look(): Promise<void> {
    this.timer = null;
    this.looking = true;
    try {
      for (const r of await evalRunsRepo(this.deps.db).failLapsed(this.deps.config.leaseMs)) {
        this.deps.logger.warn({ run_id: r.id, worker: r.claimed_by }, 'eval run failed: its lease lapsed');
        // the dead worker cannot say so: the sweep that ended the row publishes its end (once: one sweep updates
        // it), first (RunEvents never throws), so a pin's failed drop costs no run its event
        await this.runEvents.ended(r, 'failed', r.error, r.results);
        await evalPinsRepo(this.deps.db)
          .dropRun(r.id)
          .catch((err: unknown) => this.deps.logger.warn({ err, run_id: r.id }, "could not drop a lapsed run's pins"));
      }
      while (!this.closed && this.carrying.size < this.deps.config.maxRuns) {
        const run = await evalRunsRepo(this.deps.db).claim(this.name);
        if (!run) break;
        this.deps.logger.info({ run_id: run.id, worker: this.name }, 'eval run claimed');
        const own = new AbortController();
        this.held.set(run.id, own);
        const p = carryRun({ ...this.deps, worker: this.name, events: this.events, runEvents: this.runEvents }, run, AbortSignal.any([this.abort.signal, own.signal]))
          .catch((err: unknown) => this.deps.logger.error({ err, run_id: run.id }, 'eval run could not be ended'))
          .finally(() => {
            this.carrying.delete(p);
            this.held.delete(run.id);
            if (!this.held.size) this.renewal.stop();
            // room for another run: look now rather than at the next poll
            if (this.looking) return;
            if (this.timer) clearTimeout(this.timer);
            this.arm(0);
          });
        this.carrying.add(p);
        this.renewal.ensure();
      }
    } catch (err) {
      this.deps.logger.warn({ err }, 'looking for eval runs failed');
    } finally {
      this.looking = false;
    }
    this.arm(this.deps.config.pollMs);
  }

  /** Renews the lease on every run carried; a run no longer held (swept, its lease lapsed) is aborted. Errors are logged and the next renewal tries again. */
  private async renew(): Promise<void> {
    const ids = [...this.held.keys()];
    try {
      const kept = new Set(await evalRunsRepo(this.deps.db).renew(ids, this.name));
      for (const id of ids.filter((x) => !kept.has(x))) {
        this.deps.logger.warn({ run_id: id, worker: this.name }, 'eval run lost its lease: aborted');
        this.held.get(id)?.abort(new Error(LEASE_LOST));
      }
    } catch (err) {
      this.deps.logger.warn({ err }, 'renewing eval run leases failed');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.renewal.stop();
    this.abort.abort(new Error(WORKER_STOPPED));
    await Promise.all([...this.carrying]);
  }
}
