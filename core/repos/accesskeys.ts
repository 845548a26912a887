/** accesskeys: the secret is returned once by `create` and stored only as its sha256. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { getLiveRow, softDeleteAllOf, softDeleteRow } from './soft-delete';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { generateAccesskeyToken, hashAccesskeyToken } from '../credentials';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { AccesskeyRow } from '../db/rows/accesskeys';
export type { AccesskeyRow } from '../db/rows/accesskeys';

/** Default lifetime when `expire` is not given (VoIPbin's signup key: one year). */
export const DEFAULT_ACCESSKEY_EXPIRE_SEC = 365 * 24 * 3600;

/** JSON view; pass `token` only in the create response. */
export function accesskeyJson(a: AccesskeyRow, token?: string) {
  return {
    id: a.id,
    customer_id: a.customer_id,
    name: a.name,
    detail: a.detail,
    ...(token !== undefined ? { token } : {}),
    token_prefix: a.token_prefix,
    tm_expire: formatLegacy(a.tm_expire),
    tm_create: formatLegacy(a.tm_create),
    tm_update: formatLegacy(a.tm_update),
    tm_delete: formatLegacy(a.tm_delete),
  };
}

export function isAccesskeyExpired(a: Pick<AccesskeyRow, 'tm_expire'>, nowMs = clock.nowMs()): boolean {
  return a.tm_expire.getTime() <= nowMs;
}

export function accesskeysRepo(db: Db) {
  const table = () => db('accesskeys');
  return {
    /** Creates a key; `expireSec` from now (default one year). Returns the row and the one-time secret. */
    async create(input: { id?: string; customer_id: string; name?: string; detail?: string; expireSec?: number }): Promise<{ row: AccesskeyRow; token: string }> {
      const { token, hash, prefix } = generateAccesskeyToken();
      const now = clock.nowMs();
      const [row] = await table()
        .insert({
          id: input.id ?? newId(),
          customer_id: input.customer_id,
          name: input.name ?? '',
          detail: input.detail ?? '',
          token_hash: hash,
          token_prefix: prefix,
          tm_expire: new Date(now + (input.expireSec ?? DEFAULT_ACCESSKEY_EXPIRE_SEC) * 1000),
          tm_create: new Date(now),
        })
        .returning('*');
      return { row: row as AccesskeyRow, token };
    },
    get(id: string, opts: { customerId?: string } = {}): Promise<AccesskeyRow | null> {
      return getLiveRow<AccesskeyRow>(table(), id, opts);
    },
    /** Live key for a secret (expiry NOT checked here: use isAccesskeyExpired). */
    async getByToken(token: string): Promise<AccesskeyRow | null> {
      const row = await table()
        .where({ token_hash: hashAccesskeyToken(token) })
        .whereNull('tm_delete')
        .first();
      return (row as AccesskeyRow | undefined) ?? null;
    },
    async listByCustomer(customerId: string, params: PageParams): Promise<Page<AccesskeyRow>> {
      const q = table().where({ customer_id: customerId }).whereNull('tm_delete').select('*');
      return toPage(await paginate<AccesskeyRow>(q, params), (r) => r);
    },
    async update(id: string, patch: { name?: string; detail?: string }, opts: { customerId?: string } = {}): Promise<AccesskeyRow | null> {
      const q = table().where({ id }).whereNull('tm_delete');
      if (opts.customerId) q.where({ customer_id: opts.customerId });
      const [row] = await q.update({ ...patch, tm_update: clock.now() }).returning('*');
      return (row as AccesskeyRow | undefined) ?? null;
    },
    softDelete: (id: string, opts: { customerId?: string } = {}) => softDeleteRow<AccesskeyRow>(table(), id, opts),
    softDeleteByCustomer: (customerId: string) => softDeleteAllOf(table(), customerId),
  };
}
export type AccesskeysRepo = ReturnType<typeof accesskeysRepo>;
