/**
 * The evals worker: looks for unclaimed running runs every `pollMs` (one timer, re-armed after each
 * look, cleared by close()), claims up to `maxRuns` at once (a guarded UPDATE: one worker per run, however
 * many workers run) and carries each (runner.ts). close() stops looking, aborts the runs it carries
 * (their calls hang up, the runs end failed) and resolves once they have.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Db } from '../core/db/knex';
import type { Logger } from '../core/logger';
import { evalRunsRepo } from '../core/repos/eval-runs';
import type { EvalsConfig } from './config';
import { carryRun } from './runner';

export class EvalWorker {
  readonly name = `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  private timer: NodeJS.Timeout | null = null;
  private readonly abort = new AbortController();
  private readonly carrying = new Set<Promise<void>>();
  private closed = false;
  /** a look is claiming runs: a run ending meanwhile leaves the next look to it */
  private looking = false;

  constructor(private readonly deps: { db: Db; config: EvalsConfig; logger: Logger }) {}

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
      while (!this.closed && this.carrying.size < this.deps.config.maxRuns) {
        const run = await evalRunsRepo(this.deps.db).claim(this.name);
        if (!run) break;
        this.deps.logger.info({ run_id: run.id, worker: this.name }, 'eval run claimed');
        const p = carryRun({ ...this.deps, worker: this.name }, run, this.abort.signal)
          .catch((err: unknown) => this.deps.logger.error({ err, run_id: run.id }, 'eval run could not be ended'))
          .finally(() => {
            this.carrying.delete(p);
            // room for another run: look now rather than at the next poll
            if (this.looking) return;
            if (this.timer) clearTimeout(this.timer);
            this.arm(0);
          });
        this.carrying.add(p);
      }
    } catch (err) {
      this.deps.logger.warn({ err }, 'looking for eval runs failed');
    } finally {
      this.looking = false;
    }
    this.arm(this.deps.config.pollMs);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.abort.abort();
    await Promise.all([...this.carrying]);
  }
}
