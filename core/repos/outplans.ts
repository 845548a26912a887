/** outplans: how a campaign dials (source, dial timeout, retry interval, tries per destination index). */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { OutplanRow } from '../db/rows/outplans';
export type { OutplanRow } from '../db/rows/outplans';

export type DialInfo = Pick<
  OutplanRow,
  | 'source'
  | 'dial_timeout'
  | 'try_interval'
  | 'max_try_count_0'
  | 'max_try_count_1'
  | 'max_try_count_2'
  | 'max_try_count_3'
  | 'max_try_count_4'
  | 'timezone'
  | 'dial_windows'
  | 'try_interval_busy'
  | 'try_interval_noanswer'
  | 'try_interval_failed'
  | 'try_interval_machine'
>;

export function maxTryCounts(p: OutplanRow): number[] {
  return [p.max_try_count_0, p.max_try_count_1, p.max_try_count_2, p.max_try_count_3, p.max_try_count_4];
}

export function outplanJson(p: OutplanRow) {
  return {
    id: p.id,
    customer_id: p.customer_id,
    name: p.name,
    detail: p.detail,
    source: p.source,
    dial_timeout: p.dial_timeout,
    try_interval: p.try_interval,
    max_try_count_0: p.max_try_count_0,
    max_try_count_1: p.max_try_count_1,
    max_try_count_2: p.max_try_count_2,
    max_try_count_3: p.max_try_count_3,
    max_try_count_4: p.max_try_count_4,
    timezone: p.timezone,
    dial_windows: p.dial_windows,
    try_interval_busy: p.try_interval_busy,
    try_interval_noanswer: p.try_interval_noanswer,
    try_interval_failed: p.try_interval_failed,
    try_interval_machine: p.try_interval_machine,
    tm_create: formatLegacy(p.tm_create),
    tm_update: formatLegacy(p.tm_update),
    tm_delete: formatLegacy(p.tm_delete),
  };
}

export function outplansRepo(db: Db) {
  const live = () => db('outplans').whereNull('tm_delete');
  return {
    async create(customerId: string, input: { name: string; detail: string } & DialInfo): Promise<OutplanRow> {
      const [row] = await db('outplans')
        .insert({ ...input, id: newId(), customer_id: customerId, source: JSON.stringify(input.source), dial_windows: JSON.stringify(input.dial_windows ?? []), tm_create: clock.now() })
        .returning('*');
      return row as OutplanRow;
    },
    async get(customerId: string, id: string): Promise<OutplanRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as OutplanRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<OutplanRow>> {
      return toPage(await paginate<OutplanRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    async update(customerId: string, id: string, patch: Partial<{ name: string; detail: string } & DialInfo>): Promise<OutplanRow | null> {
      const update: Record<string, unknown> = { ...patch, tm_update: clock.now() };
      if (patch.source) update.source = JSON.stringify(patch.source);
      if (patch.dial_windows) update.dial_windows = JSON.stringify(patch.dial_windows);
      const [row] = await live().where({ id, customer_id: customerId }).update(update).returning('*');
      return (row as OutplanRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<OutplanRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as OutplanRow | undefined) ?? null;
    },
  };
}
