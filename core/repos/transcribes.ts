/** transcribes: live transcription of a call or conference, or of a recording's files. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { TranscribeDirection, TranscribeReferenceType, TranscribeRow } from '../db/rows/transcribes';
export type { TranscribeDirection, TranscribeReferenceType, TranscribeRow, TranscribeStatus } from '../db/rows/transcribes';

export function transcribeJson(r: TranscribeRow) {
  return {
    id: r.id,
    customer_id: r.customer_id,
    activeflow_id: r.activeflow_id,
    on_end_flow_id: r.on_end_flow_id,
    reference_type: r.reference_type,
    reference_id: r.reference_id,
    status: r.status,
    language: r.language,
    direction: r.direction,
    provider: r.provider,
    tm_create: formatLegacy(r.tm_create),
    tm_update: formatLegacy(r.tm_update),
    tm_delete: formatLegacy(r.tm_delete),
  };
}

export interface NewTranscribe {
  id?: string;
  customer_id: string;
  reference_type: TranscribeReferenceType;
  reference_id: string;
  language: string;
  direction: TranscribeDirection;
  provider: string;
  activeflow_id?: string;
  on_end_flow_id?: string;
}

export function transcribesRepo(db: Db) {
  const live = () => db('transcribes').whereNull('tm_delete');
  return {
    async create(t: NewTranscribe): Promise<TranscribeRow> {
      const [row] = await db('transcribes')
        .insert({
          ...t,
          activeflow_id: t.activeflow_id || EMPTY_UUID,
          on_end_flow_id: t.on_end_flow_id || EMPTY_UUID,
          id: t.id ?? newId(),
          status: 'progressing',
          tm_create: clock.now(),
        })
        .returning('*');
      return row as TranscribeRow;
    },
    async get(customerId: string, id: string): Promise<TranscribeRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as TranscribeRow | undefined) ?? null;
    },
    async getById(id: string): Promise<TranscribeRow | null> {
      return ((await live().where({ id }).first()) as TranscribeRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams, filter: { reference_id?: string } = {}): Promise<Page<TranscribeRow>> {
      return toPage(
        await paginate<TranscribeRow>(
          live()
            .where({ customer_id: customerId, ...filter })
            .select('*'),
          params,
        ),
        (r) => r,
      );
    },
    /** Transcribes of recordings (Twilio's Transcriptions), newest first; `recordingId`: of that recording only. */
    async ofRecordings(customerId: string, f: { recordingId?: string }, w: { offset: number; limit: number }): Promise<TranscribeRow[]> {
      let q = live().where({ customer_id: customerId, reference_type: 'recording' });
      if (f.recordingId !== undefined) q = q.where({ reference_id: f.recordingId });
      return (await q
        .orderBy([
          { column: 'tm_create', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .offset(w.offset)
        .limit(w.limit)
        .select('*')) as TranscribeRow[];
    },
    /** The progressing transcribe of a live reference, if any (one at a time per call or conference). */
    async progressingOn(referenceId: string): Promise<TranscribeRow | null> {
      return ((await live().where({ reference_id: referenceId, status: 'progressing' }).first()) as TranscribeRow | undefined) ?? null;
    },
    /** Soft delete (DELETE /transcribes/{id}): its transcripts go out of sight with it. The deleted row, or null. */
    async softDelete(customerId: string, id: string): Promise<TranscribeRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as TranscribeRow | undefined) ?? null;
    },
    /** progressing → done once; the row when it changed, else null. */
    async finish(id: string): Promise<TranscribeRow | null> {
      const [row] = await db('transcribes').where({ id, status: 'progressing' }).update({ status: 'done', tm_update: clock.now() }).returning('*');
      return (row as TranscribeRow | undefined) ?? null;
    },
  };
}
