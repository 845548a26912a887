/** Tag ids given for an agent or a queue must name live tags of the same customer. */
import type { Db } from '../db/knex';
import { invalidArgument } from '../errors';

export async function checkTagIds(db: Db, customerId: string, ids: string[], field = 'tag_ids'): Promise<string[]> {
  const unique = [...new Set(ids.map((s) => s.toLowerCase()))];
  if (!unique.length) return [];
  const found = (await db('tags').where({ customer_id: customerId }).whereNull('tm_delete').whereIn('id', unique).select('id')) as { id: string }[];
  const known = new Set(found.map((r) => r.id));
  const unknown = unique.filter((id) => !known.has(id));
  if (unknown.length)
    throw invalidArgument(
      `${field}: unknown tag id ${unknown[0]}`,
      unknown.map((id) => ({ field, issue: 'unknown tag', value: id })),
    );
  return unique;
}
