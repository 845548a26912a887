/** conferencecalls: the participants of a conference, one row per call that joined (reference_type call). */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import { conferencecallPredecessors, type ConferencecallStatus } from '../conferences/model';
import type { ConferencecallRow } from '../db/rows/conferencecalls';
export type { ConferencecallRow } from '../db/rows/conferencecalls';

export function conferencecallJson(c: ConferencecallRow) {
  return {
    id: c.id,
    customer_id: c.customer_id,
    activeflow_id: c.activeflow_id,
    conference_id: c.conference_id,
    reference_type: c.reference_type,
    reference_id: c.reference_id,
    status: c.status,
    tm_create: formatLegacy(c.tm_create),
    tm_update: formatLegacy(c.tm_update),
    tm_delete: formatLegacy(c.tm_delete),
  };
}

export interface ConferencecallTransition {
  changed: boolean;
  conferencecall: ConferencecallRow | null;
}

export function conferencecallsRepo(db: Db) {
  const table = () => db('conferencecalls');
  const live = () => table().whereNull('tm_delete');
  return {
    async create(
      input: Pick<ConferencecallRow, 'customer_id' | 'conference_id' | 'reference_id'> &
        Partial<Pick<ConferencecallRow, 'id' | 'activeflow_id' | 'end_on_exit' | 'label' | 'start_on_enter' | 'beep' | 'coach_call_id'>>,
    ): Promise<ConferencecallRow> {
      const [row] = await table()
        .insert({ id: newId(), activeflow_id: EMPTY_UUID, reference_type: 'call', status: 'joining', tm_create: clock.now(), ...input })
        .returning('*');
      return row as ConferencecallRow;
    },
    async get(id: string): Promise<ConferencecallRow | null> {
      return ((await table().where({ id }).first()) as ConferencecallRow | undefined) ?? null;
    },
    async getOwned(customerId: string, id: string): Promise<ConferencecallRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as ConferencecallRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<ConferencecallRow>> {
      return toPage(await paginate<ConferencecallRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    /** The participant a call has in a conference while it is joining or joined. */
    async present(conferenceId: string, callId: string): Promise<ConferencecallRow | null> {
      const row = await table().where({ conference_id: conferenceId, reference_id: callId }).whereIn('status', ['joining', 'joined']).orderBy('tm_create', 'desc').first();
      return (row as ConferencecallRow | undefined) ?? null;
    },
    /** The conference's live participants that are joining or joined, in the order they came. */
    async presentIn(customerId: string, conferenceId: string): Promise<ConferencecallRow[]> {
      return (await live()
        .where({ conference_id: conferenceId, customer_id: customerId })
        .whereIn('status', ['joining', 'joined'])
        .orderBy('tm_create', 'asc')
        .orderBy('id', 'asc')) as ConferencecallRow[];
    },
    /** The latest live row a call has in the conference, whatever its status. */
    async latestOf(customerId: string, conferenceId: string, callId: string): Promise<ConferencecallRow | null> {
      const row = await live().where({ conference_id: conferenceId, reference_id: callId, customer_id: customerId }).orderBy('tm_create', 'desc').first();
      return (row as ConferencecallRow | undefined) ?? null;
    },
    /** How a participant leaves (REST Participants update: EndConferenceOnExit, BeepOnExit), while it is present. */
    async setExit(id: string, patch: Partial<Pick<ConferencecallRow, 'end_on_exit' | 'beep'>>): Promise<ConferencecallRow | null> {
      const [row] = await table()
        .where({ id })
        .whereIn('status', ['joining', 'joined'])
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return (row as ConferencecallRow | undefined) ?? null;
    },
    /** Whom a joined participant coaches (null: nobody). */
    async setCoach(id: string, coachCallId: string | null): Promise<ConferencecallRow | null> {
      const [row] = await table().where({ id, status: 'joined' }).update({ coach_call_id: coachCallId, tm_update: clock.now() }).returning('*');
      return (row as ConferencecallRow | undefined) ?? null;
    },
    async transition(id: string, to: ConferencecallStatus): Promise<ConferencecallTransition> {
      const [row] = await table().where({ id }).whereIn('status', conferencecallPredecessors(to)).update({ status: to, tm_update: clock.now() }).returning('*');
      if (row) return { changed: true, conferencecall: row as ConferencecallRow };
      return { changed: false, conferencecall: await this.get(id) };
    },
  };
}
