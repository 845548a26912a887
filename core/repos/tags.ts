/** tags: customer-defined labels attached to contacts (and agents, queues). Names are unique per customer (case-insensitive). */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { TagRow } from '../db/rows/tags';
export type { TagRow } from '../db/rows/tags';

export function tagJson(t: TagRow) {
  return { id: t.id, customer_id: t.customer_id, name: t.name, detail: t.detail, tm_create: formatLegacy(t.tm_create), tm_update: formatLegacy(t.tm_update), tm_delete: formatLegacy(t.tm_delete) };
}

export function tagsRepo(db: Db) {
  const live = () => db('tags').whereNull('tm_delete');
  return {
    async create(customerId: string, input: { name: string; detail?: string }): Promise<TagRow | 'duplicate'> {
      try {
        const [row] = await db('tags')
          .insert({ id: newId(), customer_id: customerId, name: input.name, detail: input.detail ?? '', tm_create: clock.now() })
          .returning('*');
        return row as TagRow;
      } catch (e) {
        if ((e as { code?: string }).code === '23505') return 'duplicate';
        throw e;
      }
    },
    async get(customerId: string, id: string): Promise<TagRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as TagRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<TagRow>> {
      return toPage(await paginate<TagRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    async update(customerId: string, id: string, patch: { name?: string; detail?: string }): Promise<TagRow | null | 'duplicate'> {
      try {
        const [row] = await live()
          .where({ id, customer_id: customerId })
          .update({ ...patch, tm_update: clock.now() })
          .returning('*');
        return (row as TagRow | undefined) ?? null;
      } catch (e) {
        if ((e as { code?: string }).code === '23505') return 'duplicate';
        throw e;
      }
    },
    async softDelete(customerId: string, id: string): Promise<TagRow | null> {
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: clock.now(), tm_update: clock.now() }).returning('*');
      if (row) await db('contact_tags').where({ tag_id: id }).delete();
      return (row as TagRow | undefined) ?? null;
    },
  };
}
