/**
 * The client-chosen id of a create (POST /activeflows, POST /conferences take an optional `id`),
 * checked in one place. Refused ids all get one answer, 400 INVALID_ARGUMENT on field `id`: the nil
 * UUID (the platform's "no reference"), and an id any other customer holds (live or soft-deleted),
 * so a create never tells whether another customer's resource exists. An id the caller already
 * holds is the spec's duplicate create: 409 ALREADY_EXISTS.
 *
 *   const id = await claimClientId(db, 'activeflows', customerId, body.id, 'activeflow');
 */
import type { Db } from './db/knex';
import { ApiError, alreadyExists } from './errors';
import { EMPTY_UUID, newId } from './ids';

/** Tables whose rows may carry a client-chosen id. */
export type ClientIdTable = 'activeflows' | 'conferences';

export const refusedClientId = () =>
  new ApiError('INVALID_ARGUMENT', 'id cannot be used: choose another one, or omit it to have one generated', {
    details: [{ field: 'id', issue: 'unusable id' }],
  });

/** The id to create with: the client's when usable, else a fresh one when none was given. */
export async function claimClientId(db: Db, table: ClientIdTable, customerId: string, id: string | undefined, what: string): Promise<string> {
  if (id === undefined) return newId();
  const wanted = id.toLowerCase();
  if (wanted === EMPTY_UUID) throw refusedClientId();
  const row = (await db(table).where({ id: wanted }).first('customer_id')) as { customer_id: string } | undefined;
  if (!row) return wanted;
  if (row.customer_id.toLowerCase() === customerId.toLowerCase()) throw alreadyExists(`a ${what} with this id exists`);
  throw refusedClientId();
}
