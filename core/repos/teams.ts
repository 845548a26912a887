/** teams: several AIs as a graph; members hand the conversation to each other through transition functions. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import { newDirectHash } from './ais';
import type { TeamRow } from '../db/rows/teams';
export type { TeamMember, TeamRow, TeamTransition } from '../db/rows/teams';

export type TeamInput = Partial<Pick<TeamRow, 'name' | 'detail' | 'start_member_id' | 'members' | 'parameter'>>;

export function teamJson(t: TeamRow) {
  return {
    id: t.id,
    customer_id: t.customer_id,
    name: t.name,
    detail: t.detail,
    start_member_id: t.start_member_id,
    members: t.members,
    parameter: t.parameter,
    direct_hash: t.direct_hash,
    tm_create: formatLegacy(t.tm_create),
    tm_update: formatLegacy(t.tm_update),
    tm_delete: formatLegacy(t.tm_delete),
  };
}

function encode(i: TeamInput): Record<string, unknown> {
  const o: Record<string, unknown> = { ...i };
  if (i.members !== undefined) o.members = JSON.stringify(i.members);
  if (i.parameter !== undefined) o.parameter = JSON.stringify(i.parameter);
  return o;
}

export function teamsRepo(db: Db) {
  const live = () => db('teams').whereNull('tm_delete');
  return {
    async create(customerId: string, input: TeamInput): Promise<TeamRow> {
      const [row] = await db('teams')
        .insert({ ...encode(input), id: newId(), customer_id: customerId, direct_hash: newDirectHash(), tm_create: clock.now() })
        .returning('*');
      return row as TeamRow;
    },
    async get(customerId: string, id: string): Promise<TeamRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as TeamRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<TeamRow>> {
      return toPage(await paginate<TeamRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    async update(customerId: string, id: string, patch: TeamInput): Promise<TeamRow | null> {
      const [row] = await live()
        .where({ id, customer_id: customerId })
        .update({ ...encode(patch), tm_update: clock.now() })
        .returning('*');
      return (row as TeamRow | undefined) ?? null;
    },
    async regenerateDirectHash(customerId: string, id: string): Promise<TeamRow | null> {
      const [row] = await live().where({ id, customer_id: customerId }).update({ direct_hash: newDirectHash(), tm_update: clock.now() }).returning('*');
      return (row as TeamRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<TeamRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as TeamRow | undefined) ?? null;
    },
  };
}
