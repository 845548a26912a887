/** recordings as the API reads them (media-app writes them); delete is soft. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { RecordingRow } from '../db/rows/recordings';
export type { RecordingRow } from '../db/rows/recordings';

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
      return toPage(
        await paginate<RecordingRow>(
          live()
            .where({ customer_id: customerId, ...filter })
            .select('*'),
          params,
        ),
        (r) => r,
      );
    },
    async softDelete(customerId: string, id: string): Promise<RecordingRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as RecordingRow | undefined) ?? null;
    },
  };
}

/** A recording's file state (the offload sweeper's). */
export interface RecordingFiles {
  id: string;
  status: string;
  tm_delete: Date | null;
  filenames: string[];
}

/** What a call's recording row starts with (media-app/call/recordings.ts). */
export type CallRecordingStart = Pick<RecordingRow, 'id' | 'customer_id' | 'activeflow_id' | 'reference_id' | 'on_end_flow_id' | 'filenames'> & { options: unknown };

/** The writes of the node that records (media-app): start, stop, end; any recording, deleted or not. */
export function recordingsWriteRepo(db: Db) {
  return {
    /** Any recording, deleted or not. */
    async getAny(id: string): Promise<RecordingRow | undefined> {
      return (await db('recordings').where({ id }).first()) as RecordingRow | undefined;
    },
    /** A call's recording, recording from `now` (a redelivered start merges into the row it wrote). */
    async startCall(r: CallRecordingStart, now: Date): Promise<void> {
      await db('recordings')
        .insert({
          id: r.id,
          customer_id: r.customer_id,
          owner_id: EMPTY_UUID,
          owner_type: '',
          activeflow_id: r.activeflow_id,
          reference_type: 'call',
          reference_id: r.reference_id,
          status: 'recording',
          format: 'wav',
          on_end_flow_id: r.on_end_flow_id,
          options: JSON.stringify(r.options),
          filenames: r.filenames,
          tm_start: now,
          tm_create: now,
        })
        .onConflict('id')
        .merge({ status: 'recording', tm_start: now, filenames: r.filenames });
    },
    /** initiating → recording (a conference's); the row, or undefined when it was not initiating. */
    async startInitiated(id: string, filenames: string[], now: Date): Promise<RecordingRow | undefined> {
      const [rec] = (await db('recordings').where({ id, status: 'initiating' }).update({ status: 'recording', tm_start: now, tm_update: now, filenames }).returning('*')) as RecordingRow[];
      return rec;
    },
    /** recording → stopping. */
    async markStopping(id: string, now: Date): Promise<void> {
      await db('recordings').where({ id, status: 'recording' }).update({ status: 'stopping', tm_update: now });
    },
    /** Ended at `now`, whatever its status. */
    async end(id: string, now: Date): Promise<void> {
      await db('recordings').where({ id }).update({ status: 'ended', tm_end: now, tm_update: now });
    },
    /** Ended at `now` unless it already is; the row it ended, or undefined. */
    async endUnlessEnded(id: string, now: Date): Promise<RecordingRow | undefined> {
      const [rec] = (await db('recordings').where({ id }).whereNot({ status: 'ended' }).update({ status: 'ended', tm_end: now, tm_update: now }).returning('*')) as RecordingRow[];
      return rec;
    },
    /** The file state of each of `ids` that exists. */
    async filesOf(ids: string[]): Promise<RecordingFiles[]> {
      return (await db('recordings').whereIn('id', ids).select('id', 'status', 'tm_delete', 'filenames')) as RecordingFiles[];
    },
  };
}
