/** recordings as the API reads them (media-app writes them); delete is soft. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';

export interface RecordingRow {
  id: string;
  customer_id: string;
  owner_id: string;
  owner_type: string;
  activeflow_id: string;
  reference_type: string;
  reference_id: string;
  status: 'initiating' | 'recording' | 'stopping' | 'ended';
  format: string;
  on_end_flow_id: string;
  options: Record<string, unknown>;
  filenames: string[];
  tm_start: Date | null;
  tm_end: Date | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

export function recordingJson(r: RecordingRow) {
  return {
    id: r.id,
    customer_id: r.customer_id,
    owner_type: r.owner_type,
    owner_id: r.owner_id,
    activeflow_id: r.activeflow_id,
    reference_type: r.reference_type,
    reference_id: r.reference_id,
    status: r.status,
    format: r.format,
    on_end_flow_id: r.on_end_flow_id,
    filenames: r.filenames,
    tm_start: formatLegacy(r.tm_start),
    tm_end: formatLegacy(r.tm_end),
    tm_create: formatLegacy(r.tm_create),
    tm_update: formatLegacy(r.tm_update),
    tm_delete: formatLegacy(r.tm_delete),
  };
}

export function recordingsReadRepo(db: Db) {
  const live = () => db('recordings').whereNull('tm_delete');
  return {
    async get(customerId: string, id: string): Promise<RecordingRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as RecordingRow | undefined) ?? null;
    },
    /** Any customer's live recording (signed download URLs carry no credentials). */
    async getById(id: string): Promise<RecordingRow | null> {
      return ((await live().where({ id }).first()) as RecordingRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams, filter: { reference_id?: string } = {}): Promise<Page<RecordingRow>> {
      return toPage(await paginate<RecordingRow>(live().where({ customer_id: customerId, ...filter }).select('*'), params), (r) => r);
    },
    async softDelete(customerId: string, id: string): Promise<RecordingRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as RecordingRow | undefined) ?? null;
    },
  };
}
