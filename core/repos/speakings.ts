/** speakings: streaming TTS sessions on a call or conference (control-api creates, media-app moves the status). */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { SpeakingRow } from '../db/rows/speakings';
export type { SpeakingDirection, SpeakingReferenceType, SpeakingRow, SpeakingStatus } from '../db/rows/speakings';

export function speakingJson(r: SpeakingRow) {
  return {
    id: r.id,
    customer_id: r.customer_id,
    reference_type: r.reference_type,
    reference_id: r.reference_id,
    language: r.language,
    provider: r.provider,
    voice_id: r.voice_id,
    direction: r.direction,
    status: r.status,
    tm_create: formatLegacy(r.tm_create),
    tm_update: formatLegacy(r.tm_update),
    tm_delete: formatLegacy(r.tm_delete),
  };
}

export type NewSpeaking = Pick<SpeakingRow, 'customer_id' | 'reference_type' | 'reference_id' | 'language' | 'provider' | 'voice_id' | 'direction'>;

export function speakingsRepo(db: Db) {
  const live = () => db('speakings').whereNull('tm_delete');
  return {
    async create(s: NewSpeaking): Promise<SpeakingRow> {
      const [row] = await db('speakings')
        .insert({ id: newId(), ...s, status: 'initiating', say_count: 0, tm_create: clock.now() })
        .returning('*');
      return row as SpeakingRow;
    },
    async get(customerId: string, id: string): Promise<SpeakingRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as SpeakingRow | undefined) ?? null;
    },
    async getById(id: string): Promise<SpeakingRow | null> {
      return ((await live().where({ id }).first()) as SpeakingRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<SpeakingRow>> {
      return toPage(await paginate<SpeakingRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    /** Takes the next say number (row.say_count) of a session that is not stopped; null when it is stopped (or gone). */
    async nextSay(customerId: string, id: string): Promise<SpeakingRow | null> {
      const [row] = await live()
        .where({ id, customer_id: customerId })
        .whereNot({ status: 'stopped' })
        .update({ say_count: db.raw('say_count + 1'), tm_update: clock.now() })
        .returning('*');
      return (row as SpeakingRow | undefined) ?? null;
    },
    /** Moves forward only (initiating → active → stopped); the row when it changed, else null. */
    async setStatus(id: string, to: 'active' | 'stopped'): Promise<SpeakingRow | null> {
      const from = to === 'active' ? ['initiating'] : ['initiating', 'active'];
      const [row] = await db('speakings').where({ id }).whereIn('status', from).update({ status: to, tm_update: clock.now() }).returning('*');
      return (row as SpeakingRow | undefined) ?? null;
    },
    /** Soft delete (DELETE /speakings/{id}); the deleted row, or null when it was not there. */
    async softDelete(customerId: string, id: string): Promise<SpeakingRow | null> {
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: clock.now(), tm_update: clock.now() }).returning('*');
      return (row as SpeakingRow | undefined) ?? null;
    },
    /** Live sessions on a reference that are not stopped (a hangup stops them). */
    async openOn(referenceId: string): Promise<SpeakingRow[]> {
      return (await live().where({ reference_id: referenceId }).whereNot({ status: 'stopped' })) as SpeakingRow[];
    },
  };
}
