/**
 * Removing eval call audio from the files store (docs/evals.md "Both tracks of a call"). The keys to
 * delete are queued in eval_audio_deletions by whatever ended the audio (a run's deletion, its account's,
 * the retention: core/repos/eval-audio.ts); removeQueued() deletes them from the store, one by one: a key
 * the store deleted leaves the queue, one it refused stays with its error and attempt count, logged, for
 * the next pass. EvalAudioSweep is control-api's periodic pass: it ends the audio of runs that ended more
 * than EVALS_AUDIO_RETENTION_DAYS ago (0: kept as long as the run) and drains the queue, every
 * EVALS_AUDIO_SWEEP_MS on one timer it owns (re-armed after each pass, cleared by close()). Ages are read
 * off core/clock, so tests move past the retention without waiting.
 */
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import type { ObjectStore } from '../storage/local';
import { clock } from '../clock';
import { evalAudioRepo } from '../repos/eval-audio';

const DAY_MS = 86_400_000;
/** keys deleted per pass (the rest wait for the next) */
const BATCH = 500;

export interface RemovalDeps {
  db: Db;
  store: ObjectStore;
  logger: Logger;
}

/** Deletes the queued keys (of one run when given) from the store; returns how many went and how many the store refused. */
export async function removeQueuedAudio(deps: RemovalDeps, runId?: string): Promise<{ removed: number; failed: number }> {
  const repo = evalAudioRepo(deps.db);
  let removed = 0;
  let failed = 0;
  for (const d of await repo.pending(BATCH, runId)) {
    try {
      await deps.store.delete(d.key);
    } catch (err) {
      failed++;
      const error = err instanceof Error ? err.message : String(err);
      deps.logger.warn({ err, key: d.key, run_id: d.run_id, attempts: d.attempts + 1 }, 'deleting eval call audio failed: kept queued for the next sweep');
      await repo.failed(d.id, error);
      continue;
    }
    await repo.done(d.id);
    removed++;
  }
  return { removed, failed };
}

export interface SweepResult {
  expired: string[];
  removed: number;
  failed: number;
}

export class EvalAudioSweep {
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private running: Promise<void> | null = null;

  constructor(private readonly deps: RemovalDeps & { retentionDays: number; everyMs: number; onPass?: (r: SweepResult) => void }) {}

  start(): void {
    this.arm(0);
  }

  private arm(ms: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.pass().finally(() => (this.running = null));
    }, ms);
  }

  /** One pass: the runs past the retention, then the queue. Errors (the database away) are logged; the next pass tries again. */
  async runOnce(): Promise<SweepResult> {
    const days = this.deps.retentionDays;
    const expired = days > 0 ? await evalAudioRepo(this.deps.db).expire(new Date(clock.nowMs() - days * DAY_MS), days) : [];
    if (expired.length) this.deps.logger.info({ runs: expired.length, days }, 'eval call audio past its retention queued for deletion');
    const { removed, failed } = await removeQueuedAudio(this.deps);
    return { expired, removed, failed };
  }

  private async pass(): Promise<void> {
    this.timer = null;
    try {
      const r = await this.runOnce();
      this.deps.onPass?.(r);
    } catch (err) {
      this.deps.logger.warn({ err }, 'eval audio sweep failed');
    }
    this.arm(this.deps.everyMs);
  }

  /** Stops the timer and waits for a pass under way. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
