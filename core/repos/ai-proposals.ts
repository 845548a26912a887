/**
 * ai_prompt_proposals: an improved init_prompt for an AI, generated through the LLM interface from
 * the AI's recent AI calls. progressing → completed | failed; completed → accepted (the AI's prompt
 * changes and a history entry names the proposal) or rejected.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { ProposalRow, ProposalStatus } from '../db/rows/ai-proposals';
export type { ProposalRow, ProposalStatus } from '../db/rows/ai-proposals';

export function proposalJson(p: ProposalRow) {
  return {
    id: p.id,
    customer_id: p.customer_id,
    ai_id: p.ai_id,
    audit_ids: p.audit_ids,
    basis_prompt_history_id: p.basis_prompt_history_id ?? EMPTY_UUID,
    original_prompt: p.original_prompt,
    proposed_prompt: p.proposed_prompt,
    rationale: p.rationale,
    status: p.status,
    error: p.error,
    applied_prompt_history_id: p.applied_prompt_history_id ?? EMPTY_UUID,
    tm_create: formatLegacy(p.tm_create),
    tm_update: formatLegacy(p.tm_update),
    tm_delete: formatLegacy(p.tm_delete),
  };
}

export function proposalsRepo(db: Db) {
  const live = () => db('ai_prompt_proposals').whereNull('tm_delete');
  return {
    async create(customerId: string, input: Pick<ProposalRow, 'ai_id' | 'audit_ids' | 'basis_prompt_history_id' | 'original_prompt'>): Promise<ProposalRow> {
      const [row] = await db('ai_prompt_proposals')
        .insert({ ...input, audit_ids: JSON.stringify(input.audit_ids), id: newId(), customer_id: customerId, status: 'progressing', tm_create: clock.now() })
        .returning('*');
      return row as ProposalRow;
    },
    async get(customerId: string, id: string): Promise<ProposalRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as ProposalRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams, filter: { ai_id?: string; status?: string } = {}): Promise<Page<ProposalRow>> {
      const q = live().where({ customer_id: customerId });
      if (filter.ai_id) q.where({ ai_id: filter.ai_id });
      if (filter.status) q.where('status', filter.status);
      return toPage(await paginate<ProposalRow>(q.select('*'), params), (r) => r);
    },
    /** Moves from one of `from` to the patch's status; null when the proposal is not in `from`. */
    async transition(id: string, from: ProposalStatus[], patch: Partial<Omit<ProposalRow, 'audit_ids'>>): Promise<ProposalRow | null> {
      const [row] = await live()
        .where({ id })
        .whereIn('status', from)
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return (row as ProposalRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<ProposalRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as ProposalRow | undefined) ?? null;
    },
  };
}
