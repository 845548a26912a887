// The call rows a long-call test waits on: a call with a given status, the leg chained to a call.
import type { Knex } from 'knex';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { until } from '../media-app/harness';

/** The call once it has `status` (20 s at most). */
export async function callWithStatus(db: Knex, id: string, status: string, what: string): Promise<CallRow> {
  return until(
    async () => {
      const r = await callsRepo(db).get(id);
      return r?.status === status ? r : null;
    },
    20_000,
    what,
  );
}

/** The call once it is up (`progressing`); fails at once, with its hangup record, if it ended first. */
export async function callUp(db: Knex, id: string, what: string): Promise<CallRow> {
  return until(
    async () => {
      const r = await callsRepo(db).get(id);
      if (r?.status === 'hangup') throw new Error(`${what}: call ${id} ended before it was seen up (hangup_by '${r.hangup_by}', hangup_reason '${r.hangup_reason}')`);
      return r?.status === 'progressing' ? r : null;
    },
    20_000,
    what,
  );
}

/** The first call chained to `masterId` (its connect leg, its dialled party) once it has `status`. */
export async function legOf(db: Knex, masterId: string, status: string, what: string, where: (r: CallRow) => boolean = () => true): Promise<CallRow> {
  return until(
    async () => {
      const rows = (await db('calls').where({ master_call_id: masterId }).orderBy('tm_create')) as CallRow[];
      const r = rows.find((x) => x.status === status && where(x));
      return r ? ((await callsRepo(db).get(r.id)) ?? null) : null;
    },
    20_000,
    what,
  );
}

/** Both records of a call that ended: who hung up and why. */
export const hangupOf = (r: CallRow) => ({ hangup_by: r.hangup_by, hangup_reason: r.hangup_reason });
