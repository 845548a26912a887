/**
 * Voicemail messages: a recording's WAV in a box with caller, time, duration and transcript, in the
 * folder `new` (unheard) or `old` (heard or saved). Lists run newest first over the partial indexes
 * of migration 0937. Delete is soft.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { Folder, VoicemailMessageRow } from '../db/rows/voicemail-messages';
export { FOLDERS, type Folder, type VoicemailMessageRow } from '../db/rows/voicemail-messages';

export type NewMessage = Pick<VoicemailMessageRow, 'customer_id' | 'box_id' | 'caller_type' | 'caller_number' | 'caller_name' | 'filename' | 'duration_ms'> &
  Partial<Pick<VoicemailMessageRow, 'call_id' | 'recording_id' | 'urgent' | 'transcript'>>;

export function voicemailMessageJson(m: VoicemailMessageRow) {
  return {
    id: m.id,
    customer_id: m.customer_id,
    box_id: m.box_id,
    folder: m.folder,
    urgent: m.urgent,
    caller_type: m.caller_type,
    caller_number: m.caller_number,
    caller_name: m.caller_name,
    call_id: m.call_id ?? '',
    recording_id: m.recording_id ?? '',
    duration: m.duration_ms,
    transcript: m.transcript,
    summary: m.summary,
    summary_error: m.summary_error,
    tm_create: formatLegacy(m.tm_create),
    tm_update: formatLegacy(m.tm_update),
    tm_delete: formatLegacy(m.tm_delete),
  };
}

export function voicemailMessagesRepo(db: Db) {
  const live = () => db('voicemail_messages').whereNull('tm_delete');
  return {
    async create(m: NewMessage): Promise<VoicemailMessageRow> {
      const [row] = await db('voicemail_messages')
        .insert({ ...m, id: newId(), folder: 'new', tm_create: clock.now() })
        .returning('*');
      return row as VoicemailMessageRow;
    },
    async get(customerId: string, id: string): Promise<VoicemailMessageRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as VoicemailMessageRow | undefined) ?? null;
    },
    /** A box's messages, newest first, optionally one folder. */
    async list(boxId: string, params: PageParams, folder?: Folder): Promise<Page<VoicemailMessageRow>> {
      const q = live().where({ box_id: boxId });
      if (folder) q.where({ folder });
      return toPage(await paginate<VoicemailMessageRow>(q.select('*'), params), (r) => r);
    },
    /** Every live message of one folder, oldest first (the order the voice menu plays them in). */
    async inFolder(boxId: string, folder: Folder): Promise<VoicemailMessageRow[]> {
      return (await live()
        .where({ box_id: boxId, folder })
        .orderBy([{ column: 'tm_create' }, { column: 'id' }])
        .select('*')) as VoicemailMessageRow[];
    },
    /** New and old message counts per box of `boxIds`, one grouped query (a box without messages is absent). */
    async countsByBox(boxIds: string[]): Promise<{ box_id: string; folder: string; n: number }[]> {
      if (!boxIds.length) return [];
      const rows = (await live().whereIn('box_id', boxIds).groupBy('box_id', 'folder').select('box_id', 'folder').count('* as n')) as { box_id: string; folder: string; n: string }[];
      return rows.map((r) => ({ box_id: r.box_id, folder: r.folder, n: Number(r.n) }));
    },
    async count(boxId: string): Promise<number> {
      const r = (await live().where({ box_id: boxId }).count<{ n: string }[]>('* as n'))[0];
      return Number(r?.n ?? 0);
    },
    async move(customerId: string, id: string, folder: Folder): Promise<{ row: VoicemailMessageRow; changed: boolean } | null> {
      const before = await this.get(customerId, id);
      if (!before) return null;
      if (before.folder === folder) return { row: before, changed: false };
      const [row] = await live().where({ id, customer_id: customerId }).update({ folder, tm_update: clock.now() }).returning('*');
      return row ? { row: row as VoicemailMessageRow, changed: true } : null;
    },
    async setTranscript(id: string, transcript: string): Promise<void> {
      await db('voicemail_messages').where({ id }).update({ transcript, tm_update: clock.now() });
    },
    /** The AI summary, or why there is none (one of the two is ''). */
    async setSummary(id: string, s: { summary: string; summary_error: string }): Promise<void> {
      await db('voicemail_messages')
        .where({ id })
        .update({ ...s, tm_update: clock.now() });
    },
    /** Deletes the message and the recording it was made from (the message owns its audio file). */
    async softDelete(customerId: string, id: string): Promise<VoicemailMessageRow | null> {
      const now = clock.now();
      return db.transaction(async (trx) => {
        const [row] = (await trx('voicemail_messages')
          .whereNull('tm_delete')
          .where({ id, customer_id: customerId })
          .update({ tm_delete: now, tm_update: now })
          .returning('*')) as VoicemailMessageRow[];
        if (row?.recording_id) await trx('recordings').whereNull('tm_delete').where({ id: row.recording_id, customer_id: customerId }).update({ tm_delete: now, tm_update: now });
        return row ?? null;
      });
    },
  };
}
