/** timeline_analyses (migration 0880): one record per (customer, activeflow); progressing → completed | failed. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatRfc3339 } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { AnalysisStatus, TimelineAnalysisRow } from '../db/rows/timeline-analyses';
export type { AnalysisStatus, TimelineAnalysisRow } from '../db/rows/timeline-analyses';

/** The reference's TimelineManagerAnalysis; `result` is left out while there is none (its schema is an object, never null). */
export function timelineAnalysisJson(a: TimelineAnalysisRow) {
  return {
    id: a.id,
    customer_id: a.customer_id,
    activeflow_id: a.activeflow_id,
    status: a.status,
    ...(a.result ? { result: a.result } : {}),
    error: a.error,
    tm_create: formatRfc3339(a.tm_create)!,
    tm_update: formatRfc3339(a.tm_update),
  };
}

export function timelineAnalysesRepo(db: Db) {
  const table = () => db('timeline_analyses');
  return {
    /** The activeflow's record, created progressing when it had none (`created` says which). */
    async open(customerId: string, activeflowId: string): Promise<{ row: TimelineAnalysisRow; created: boolean }> {
      const [r] = await db('timeline_analyses')
        .insert({ id: newId(), customer_id: customerId, activeflow_id: activeflowId, status: 'progressing', tm_create: clock.now() })
        .onConflict(['customer_id', 'activeflow_id'])
        .ignore()
        .returning('*');
      if (r) return { row: r as TimelineAnalysisRow, created: true };
      return { row: (await table().where({ customer_id: customerId, activeflow_id: activeflowId }).first()) as TimelineAnalysisRow, created: false };
    },
    /** A finished record back to progressing (reanalyze); null when it is progressing already or gone. */
    async restart(id: string): Promise<TimelineAnalysisRow | null> {
      const [r] = await table().where({ id }).whereNot({ status: 'progressing' }).update({ status: 'progressing', result: null, error: '', tm_update: clock.now() }).returning('*');
      return (r as TimelineAnalysisRow | undefined) ?? null;
    },
    async get(customerId: string, id: string): Promise<TimelineAnalysisRow | null> {
      return ((await table().where({ id, customer_id: customerId }).first()) as TimelineAnalysisRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams, filter: { activeflowId?: string; status?: AnalysisStatus } = {}): Promise<Page<TimelineAnalysisRow>> {
      const q = table().where({ customer_id: customerId });
      if (filter.activeflowId) q.where({ activeflow_id: filter.activeflowId });
      if (filter.status) q.where({ status: filter.status });
      return toPage(await paginate<TimelineAnalysisRow>(q.select('*'), params), (r) => r);
    },
    /** Records the outcome of a progressing analysis (a deleted or restarted one is left alone). */
    async finish(id: string, startedAt: Date | null, outcome: { status: 'completed'; result: Record<string, unknown> } | { status: 'failed'; error: string }): Promise<TimelineAnalysisRow | null> {
      const q = table().where({ id, status: 'progressing' });
      if (startedAt) q.where({ tm_update: startedAt });
      else q.whereNull('tm_update');
      const patch =
        outcome.status === 'completed'
          ? { status: 'completed' as const, result: JSON.stringify(outcome.result), error: '', tm_update: clock.now() }
          : { status: 'failed' as const, result: null, error: outcome.error, tm_update: clock.now() };
      const [r] = await q.update(patch).returning('*');
      return (r as TimelineAnalysisRow | undefined) ?? null;
    },
    /** Hard delete (the reference's DELETE): the deleted record, or null. */
    async remove(customerId: string, id: string): Promise<TimelineAnalysisRow | null> {
      const [r] = await table().where({ id, customer_id: customerId }).del().returning('*');
      return (r as TimelineAnalysisRow | undefined) ?? null;
    },
  };
}
