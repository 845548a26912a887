/**
 * conferences: status changes are guarded UPDATEs (only from an allowed predecessor), so a command
 * delivered twice changes nothing the second time. The active recording is claimed atomically
 * (recording_id set only while it is empty), which makes RECORDING_ALREADY_ACTIVE exact.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import { conferencePredecessors, type ConferenceStatus } from '../conferences/model';
import type { ConferenceRow, ConferenceStatusCallback } from '../db/rows/conferences';
export type { ConferenceRow, ConferenceStatusCallback } from '../db/rows/conferences';

export type ConferenceCreate = Pick<ConferenceRow, 'customer_id' | 'type'> &
  Partial<Pick<ConferenceRow, 'id' | 'name' | 'detail' | 'data' | 'timeout' | 'pre_flow_id' | 'post_flow_id' | 'status' | 'tm_create' | 'ends_when_empty' | 'max_participants'>>;

export type ConferenceUpdate = Partial<Pick<ConferenceRow, 'name' | 'detail' | 'data' | 'timeout' | 'pre_flow_id' | 'post_flow_id' | 'direct_hash' | 'transcribe_id' | 'transcribe_ids'>>;

/** The Conference as the API and events show it (legacy timestamps, 9999 sentinel when unset). */
export function conferenceJson(c: ConferenceRow) {
  return {
    id: c.id,
    customer_id: c.customer_id,
    type: c.type,
    status: c.status,
    name: c.name,
    detail: c.detail,
    data: c.data,
    timeout: c.timeout,
    pre_flow_id: c.pre_flow_id,
    post_flow_id: c.post_flow_id,
    conferencecall_ids: c.conferencecall_ids,
    recording_id: c.recording_id,
    recording_ids: c.recording_ids,
    transcribe_id: c.transcribe_id,
    transcribe_ids: c.transcribe_ids,
    direct_hash: c.direct_hash,
    tm_end: formatLegacy(c.tm_end),
    tm_create: formatLegacy(c.tm_create),
    tm_update: formatLegacy(c.tm_update),
    tm_delete: formatLegacy(c.tm_delete),
  };
}
export type ConferenceJson = ReturnType<typeof conferenceJson>;

export interface ConferenceTransition {
  changed: boolean;
  conference: ConferenceRow | null;
}

export function conferencesRepo(db: Db) {
  const table = () => db('conferences');
  const live = () => table().whereNull('tm_delete');
  const one = async (q: ReturnType<typeof table>): Promise<ConferenceRow | null> => ((await q.first()) as ConferenceRow | undefined) ?? null;
  const update = async (id: string, patch: Record<string, unknown>, where: Record<string, unknown> = {}): Promise<ConferenceRow | null> => {
    const [row] = await table()
      .where({ id, ...where })
      .update({ ...patch, tm_update: clock.now() })
      .returning('*');
    return (row as ConferenceRow | undefined) ?? null;
  };
  /** The customer's live conference named `name` (type conference, starting or progressing; the oldest when several). */
  const liveNamed = (customerId: string, name: string) =>
    one(live().where({ customer_id: customerId, name, type: 'conference' }).whereIn('status', ['starting', 'progressing']).orderBy('tm_create', 'asc').orderBy('id', 'asc'));
  /** A new row's fields before what its maker gives. */
  const blank = () => ({
    id: newId(),
    status: 'starting' as const,
    detail: '',
    timeout: 0,
    pre_flow_id: EMPTY_UUID,
    post_flow_id: EMPTY_UUID,
    recording_id: EMPTY_UUID,
    transcribe_id: EMPTY_UUID,
    tm_create: clock.now(),
  });

  return {
    async create(input: ConferenceCreate): Promise<ConferenceRow> {
      const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
      const row = {
        ...blank(),
        name: '',
        ...given,
        data: JSON.stringify(input.data ?? {}),
      };
      const [created] = await table().insert(row).returning('*');
      return created as ConferenceRow;
    },
    liveNamed,
    /**
     * That conference, or a new one made by the name (ends_when_empty). Two callers (or nodes)
     * racing to make it meet at the unique index conferences_live_name_uq: the loser's insert does
     * nothing and it reads the winner's row.
     */
    async namedOrCreate(customerId: string, name: string, maxParticipants = 0): Promise<{ conference: ConferenceRow; created: boolean }> {
      for (let attempt = 0; attempt < 5; attempt++) {
        const found = await liveNamed(customerId, name);
        if (found) return { conference: found, created: false };
        const row = {
          ...blank(),
          customer_id: customerId,
          type: 'conference' as const,
          name,
          ends_when_empty: true,
          max_participants: maxParticipants,
          data: JSON.stringify({}),
        };
        const [created] = (await table().insert(row).onConflict().ignore().returning('*')) as ConferenceRow[];
        if (created) return { conference: created, created: true };
      }
      throw new Error(`conference "${name}" could not be found or made`);
    },
    /** Any conference, deleted or not (media-app keeps writing a deleted one until it is terminated). */
    get(id: string): Promise<ConferenceRow | null> {
      return one(table().where({ id }));
    },
    getOwned(customerId: string, id: string): Promise<ConferenceRow | null> {
      return one(live().where({ id, customer_id: customerId }));
    },
    async list(customerId: string, params: PageParams): Promise<Page<ConferenceRow>> {
      return toPage(await paginate<ConferenceRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    change(id: string, patch: ConferenceUpdate): Promise<ConferenceRow | null> {
      const p: Record<string, unknown> = { ...patch };
      if (patch.data !== undefined) p.data = JSON.stringify(patch.data);
      return update(id, p, { tm_delete: null });
    },
    softDelete(customerId: string, id: string): Promise<ConferenceRow | null> {
      return update(id, { tm_delete: clock.now() }, { customer_id: customerId, tm_delete: null });
    },
    /** Moves to `to` only from an allowed predecessor; terminated stamps tm_end. */
    async transition(id: string, to: ConferenceStatus, patch: Partial<Pick<ConferenceRow, 'node_id'>> = {}): Promise<ConferenceTransition> {
      const now = clock.now();
      const u: Record<string, unknown> = { ...patch, status: to, tm_update: now };
      if (to === 'terminated') u.tm_end = now;
      const [row] = await table().where({ id }).whereIn('status', conferencePredecessors(to)).update(u).returning('*');
      if (row) return { changed: true, conference: row as ConferenceRow };
      return { changed: false, conference: await this.get(id) };
    },
    /** Records the node that hosts a live conference now (a room hosted again after its node died). */
    setNode(id: string, nodeId: string): Promise<ConferenceRow | null> {
      return update(id, { node_id: nodeId }, { status: 'progressing' });
    },
    /** Stamps tm_start once (the room has started); the row, and whether this call stamped it. */
    async markStarted(id: string): Promise<{ conference: ConferenceRow | null; stamped: boolean }> {
      const [row] = await table().where({ id }).whereNull('tm_start').update({ tm_start: clock.now() }).returning('*');
      if (row) return { conference: row as ConferenceRow, stamped: true };
      return { conference: await this.get(id), stamped: false };
    },
    /** Sets the room's statusCallback unless one is set already (the first participant's wins, as on Twilio). */
    async claimStatusCallback(id: string, cb: ConferenceStatusCallback): Promise<void> {
      await table()
        .where({ id })
        .whereNull('status_callback')
        .update({ status_callback: db.raw('?::jsonb', [JSON.stringify(cb)]) });
    },
    /** The next SequenceNumber of the room's status callbacks. */
    async nextCallbackSeq(id: string): Promise<number> {
      const [row] = (await table().where({ id }).increment('callback_seq', 1).returning('callback_seq')) as { callback_seq: number }[];
      return row?.callback_seq ?? 0;
    },
    addCall(id: string, conferencecallId: string): Promise<ConferenceRow | null> {
      return update(id, { conferencecall_ids: db.raw('array_append(array_remove(conferencecall_ids, ?::uuid), ?::uuid)', [conferencecallId, conferencecallId]) });
    },
    removeCall(id: string, conferencecallId: string): Promise<ConferenceRow | null> {
      return update(id, { conferencecall_ids: db.raw('array_remove(conferencecall_ids, ?::uuid)', [conferencecallId]) });
    },
    /** Claims the active recording slot; null when one is already active (or the conference is gone). */
    claimRecording(id: string, recordingId: string): Promise<ConferenceRow | null> {
      return update(id, { recording_id: recordingId, recording_ids: db.raw('array_append(recording_ids, ?::uuid)', [recordingId]) }, { recording_id: EMPTY_UUID, tm_delete: null });
    },
    /** Frees the slot if this recording still holds it. */
    releaseRecording(id: string, recordingId: string): Promise<ConferenceRow | null> {
      return update(id, { recording_id: EMPTY_UUID }, { recording_id: recordingId });
    },
  };
}
