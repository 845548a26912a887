// A recording row as the record suites seed it: ended, of a call, owned by no one, its file(s) written by
// the suite itself.
import type { Knex } from '../core/db/knex';
import { EMPTY_UUID, newId } from '../core/ids';

/** Inserts recording `id` of `customerId` for `filename`; `more` adds to or overrides the fields (tm_start, status, tm_create …). */
export async function insertRecording(db: Knex, customerId: string, id: string, filename: string, more: Record<string, unknown> = {}): Promise<void> {
  await db('recordings').insert({
    id,
    customer_id: customerId,
    owner_id: EMPTY_UUID,
    activeflow_id: EMPTY_UUID,
    reference_type: 'call',
    reference_id: newId(),
    status: 'ended',
    on_end_flow_id: EMPTY_UUID,
    filenames: [filename],
    tm_create: new Date(),
    ...more,
  });
}
