/** summaries: LLM-made summaries of a call's, conference's, transcribe's or recording's transcripts. progressing → done. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { SummaryReferenceType, SummaryRow } from '../db/rows/summaries';
export type { SummaryReferenceType, SummaryRow } from '../db/rows/summaries';

export function summaryJson(s: SummaryRow) {
  return {
    id: s.id,
    customer_id: s.customer_id,
    activeflow_id: s.activeflow_id ?? EMPTY_UUID,
    on_end_flow_id: s.on_end_flow_id ?? EMPTY_UUID,
    reference_type: s.reference_type,
    reference_id: s.reference_id,
    status: s.status,
    language: s.language,
    content: s.content,
    tm_create: formatLegacy(s.tm_create),
    tm_update: formatLegacy(s.tm_update),
    tm_delete: formatLegacy(s.tm_delete),
  };
}

export function summariesRepo(db: Db) {
  const live = () => db('summaries').whereNull('tm_delete');
  return {
    async create(customerId: string, input: Pick<SummaryRow, 'reference_type' | 'reference_id' | 'language'> & Partial<Pick<SummaryRow, 'activeflow_id' | 'on_end_flow_id'>>): Promise<SummaryRow> {
      const [r] = await db('summaries')
        .insert({ ...input, id: newId(), customer_id: customerId, status: 'progressing', tm_create: clock.now() })
        .returning('*');
      return r as SummaryRow;
    },
    async get(customerId: string, id: string): Promise<SummaryRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as SummaryRow | undefined) ?? null;
    },
    async getById(id: string): Promise<SummaryRow | null> {
      return ((await live().where({ id }).first()) as SummaryRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<SummaryRow>> {
      return toPage(await paginate<SummaryRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    async update(id: string, patch: Partial<SummaryRow>): Promise<SummaryRow | null> {
      const [r] = await live()
        .where({ id })
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return (r as SummaryRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<SummaryRow | null> {
      const now = clock.now();
      const [r] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (r as SummaryRow | undefined) ?? null;
    },
  };
}

const REFERENCE_TABLES: Record<SummaryReferenceType, string> = { call: 'calls', conference: 'conferences', transcribe: 'transcribes', recording: 'recordings' };

/** Whether the customer has the resource a summary would be of (deleted ones too; a malformed id is none). */
export async function summaryReferenceExists(db: Db, customerId: string, type: SummaryReferenceType, id: string): Promise<boolean> {
  const row: unknown = await db(REFERENCE_TABLES[type])
    .where({ id, customer_id: customerId })
    .first()
    .catch(() => null);
  return !!row;
}
