/** aiaudits: one AI participant of a finished AI call, evaluated by the LLM. progressing → completed | failed. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { AiAuditRow } from '../db/rows/ai-audits';
export type { AiAuditRow, AiAuditStatus } from '../db/rows/ai-audits';

export function aiAuditJson(a: AiAuditRow) {
  return {
    id: a.id,
    customer_id: a.customer_id,
    aicall_id: a.aicall_id,
    ai_id: a.ai_id,
    prompt_history_id: a.prompt_history_id ?? EMPTY_UUID,
    status: a.status,
    overall_score: a.overall_score,
    evaluation: a.evaluation,
    message_ids: a.message_ids,
    language: a.language,
    error: a.error,
    tm_create: formatLegacy(a.tm_create),
    tm_update: formatLegacy(a.tm_update),
    tm_delete: formatLegacy(a.tm_delete),
  };
}

export type AiAuditResult = Pick<AiAuditRow, 'status' | 'error'> & Partial<Pick<AiAuditRow, 'overall_score' | 'evaluation' | 'message_ids'>>;

export function aiAuditsRepo(db: Db) {
  const live = () => db('aiaudits').whereNull('tm_delete');
  return {
    async create(customerId: string, input: Pick<AiAuditRow, 'aicall_id' | 'ai_id' | 'prompt_history_id' | 'language'>): Promise<AiAuditRow> {
      const [r] = await db('aiaudits')
        .insert({ ...input, id: newId(), customer_id: customerId, status: 'progressing', tm_create: clock.now() })
        .returning('*');
      return r as AiAuditRow;
    },
    async get(customerId: string, id: string): Promise<AiAuditRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as AiAuditRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams, filter: { aicallId?: string; aiId?: string } = {}): Promise<Page<AiAuditRow>> {
      const q = live().where({ customer_id: customerId });
      if (filter.aicallId) q.where({ aicall_id: filter.aicallId });
      if (filter.aiId) q.where({ ai_id: filter.aiId });
      return toPage(await paginate<AiAuditRow>(q.select('*'), params), (r) => r);
    },
    /** Records the outcome of a progressing audit (a deleted or finished one is left alone). */
    async finish(id: string, result: AiAuditResult): Promise<AiAuditRow | null> {
      const patch: Record<string, unknown> = { ...result, tm_update: clock.now() };
      if (result.evaluation !== undefined) patch.evaluation = JSON.stringify(result.evaluation);
      if (result.message_ids !== undefined) patch.message_ids = JSON.stringify(result.message_ids);
      const [r] = await live().where({ id, status: 'progressing' }).update(patch).returning('*');
      return (r as AiAuditRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<AiAuditRow | null> {
      const now = clock.now();
      const [r] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (r as AiAuditRow | undefined) ?? null;
    },
  };
}
