/** agents (the users who log in): rows, JSON view, repository. Passwords are scrypt hashes. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { softDeleteAllOf } from './soft-delete';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { hashPassword } from '../password';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { AgentAddress, AgentRow, AgentStatus } from '../db/rows/agents';
export { AGENT_STATUSES, type AgentAddress, type AgentRow, type AgentStatus, RING_METHODS } from '../db/rows/agents';

export interface AgentCreate {
  id?: string;
  customer_id: string;
  username: string;
  /** Plain password, hashed here; or give password_hash. */
  password?: string;
  password_hash?: string;
  name?: string;
  detail?: string;
  ring_method?: AgentRow['ring_method'];
  status?: AgentStatus;
  permission: number;
  tag_ids?: string[];
  addresses?: AgentAddress[];
  direct_hash?: string;
}

export function agentJson(a: AgentRow) {
  return {
    id: a.id,
    customer_id: a.customer_id,
    username: a.username,
    name: a.name,
    detail: a.detail,
    ring_method: a.ring_method,
    status: a.status,
    permission: a.permission,
    tag_ids: a.tag_ids ?? [],
    addresses: a.addresses ?? [],
    direct_hash: a.direct_hash,
    tm_create: formatLegacy(a.tm_create),
    tm_update: formatLegacy(a.tm_update),
    tm_delete: formatLegacy(a.tm_delete),
  };
}

export function agentsRepo(db: Db) {
  const table = () => db('agents');
  return {
    async create(input: AgentCreate): Promise<AgentRow> {
      const { password, ...rest } = input;
      const password_hash = input.password_hash ?? (password !== undefined ? await hashPassword(password) : '');
      const row = {
        ...rest,
        id: input.id ?? newId(),
        password_hash,
        tag_ids: JSON.stringify(input.tag_ids ?? []),
        addresses: JSON.stringify(input.addresses ?? []),
        tm_create: clock.now(),
      };
      const [created] = await table().insert(row).returning('*');
      return created as AgentRow;
    },
    async get(id: string, opts: { customerId?: string; includeDeleted?: boolean } = {}): Promise<AgentRow | null> {
      const q = table().where({ id });
      if (opts.customerId) q.where({ customer_id: opts.customerId });
      if (!opts.includeDeleted) q.whereNull('tm_delete');
      return ((await q.first()) as AgentRow | undefined) ?? null;
    },
    /** Live agent by username (case-insensitive). */
    async getByUsername(username: string): Promise<AgentRow | null> {
      const row = await table().whereRaw('lower(username) = lower(?)', [username]).whereNull('tm_delete').first();
      return (row as AgentRow | undefined) ?? null;
    },
    async listByCustomer(customerId: string, params: PageParams, filter: { status?: AgentStatus; tagIds?: string[] } = {}): Promise<Page<AgentRow>> {
      const q = table().where({ customer_id: customerId }).whereNull('tm_delete').select('*');
      if (filter.status !== undefined) q.where({ status: filter.status });
      if (filter.tagIds?.length) q.whereRaw('tag_ids @> ?::jsonb', [JSON.stringify(filter.tagIds)]);
      return toPage(await paginate<AgentRow>(q, params), (r) => r);
    },
    async update(id: string, patch: Partial<Omit<AgentCreate, 'id' | 'customer_id'>>): Promise<AgentRow | null> {
      const { password, ...rest } = patch;
      const values: Record<string, unknown> = { ...rest, tm_update: clock.now() };
      if (password !== undefined) {
        values.password_hash = await hashPassword(password);
        // a new password signs out every session of the agent (tokens carry the generation they were signed in)
        values.session_generation = db.raw('session_generation + 1');
      }
      if (patch.tag_ids) values.tag_ids = JSON.stringify(patch.tag_ids);
      if (patch.addresses) values.addresses = JSON.stringify(patch.addresses);
      const [row] = await table().where({ id }).whereNull('tm_delete').update(values).returning('*');
      return (row as AgentRow | undefined) ?? null;
    },
    async softDelete(id: string): Promise<AgentRow | null> {
      const now = clock.now();
      const [row] = await table().where({ id }).whereNull('tm_delete').update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as AgentRow | undefined) ?? null;
    },
    /**
     * Signs out every session of one agent or of every agent of a customer (account freeze): their
     * login and delegate tokens carry a lower generation from now on. Returns the agents touched.
     */
    async retireSessions(by: { agentId: string } | { customerId: string }): Promise<string[]> {
      const q = 'agentId' in by ? table().where({ id: by.agentId }) : table().where({ customer_id: by.customerId });
      const rows = await q.update({ session_generation: db.raw<number>('session_generation + 1') }).returning('id');
      return (rows as Array<{ id: string }>).map((r) => r.id);
    },
    /** Soft-deletes every agent of a customer (account deletion cascade); returns how many. */
    softDeleteByCustomer: (customerId: string) => softDeleteAllOf(table(), customerId),
  };
}
export type AgentsRepo = ReturnType<typeof agentsRepo>;
