/**
 * The run's events as the worker publishes them (core/evals/events.ts): one per call that ended and one at
 * the run's end. A publish that fails is logged and the run goes on: its row is the record.
 */
import type { Logger } from '../core/logger';
import type { EventPublisher } from '../core/events/bus';
import type { EvalCallResult } from '../core/evals/schema';
import { endedPayload, progressedPayload, publishRunEvent } from '../core/evals/events';

interface RunRef {
  id: string;
  customer_id: string;
}

export class RunEvents {
  constructor(
    private readonly publisher: EventPublisher,
    private readonly logger: Logger,
  ) {}

  async progressed(run: RunRef, planned: number, results: EvalCallResult[]): Promise<void> {
    const last = results[results.length - 1];
    if (!last) return;
    await this.send(run, 'eval_run_progressed', () => progressedPayload(run, planned, results, last));
  }

  async ended(run: RunRef, status: 'finished' | 'failed', error: string, results: EvalCallResult[]): Promise<void> {
    await this.send(run, status === 'finished' ? 'eval_run_finished' : 'eval_run_failed', () => endedPayload(run, status, error, results));
  }

  private async send(run: RunRef, type: 'eval_run_progressed' | 'eval_run_finished' | 'eval_run_failed', payload: () => Parameters<typeof publishRunEvent>[2]): Promise<void> {
    try {
      await publishRunEvent(this.publisher, type, payload());
    } catch (err) {
      this.logger.warn({ err, run_id: run.id, event_type: type }, 'publishing an eval run event failed');
    }
  }
}
