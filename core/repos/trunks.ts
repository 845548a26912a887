/**
 * trunks: a customer's PBX calling in. `auth_types` ip: the source address must be in `allowed_ips`
 * (IPs or CIDRs); basic: digest with username/password at `{domain_name}.trunk.{SIP_DOMAIN}`.
 * The password is write-only on the API.
 */

import { codecsOf, DEFAULT_TRUNK_CODECS } from '../calls/codecs';
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { TrunkRow } from '../db/rows/trunks';
import type { CustomerStatus } from '../db/rows/customers';
export type { TrunkAuthType, TrunkRow } from '../db/rows/trunks';

/** A trunk found by source address, with its customer's status (null: no customer row). */
export interface TrunkWithStanding {
  trunk: TrunkRow;
  customerStatus: CustomerStatus | null;
}

export type TrunkFields = Pick<TrunkRow, 'name' | 'detail' | 'auth_types' | 'username' | 'password' | 'allowed_ips'> & Partial<Pick<TrunkRow, 'media_encryption' | 'dtmf_mode' | 'codecs'>>;

export function trunkRealm(domainName: string, sipDomain: string): string {
  return `${domainName}.trunk.${sipDomain}`;
}

export function trunkJson(t: TrunkRow, opts: { sipDomain: string }) {
  return {
    id: t.id,
    customer_id: t.customer_id,
    name: t.name,
    detail: t.detail,
    domain_name: t.domain_name,
    realm: trunkRealm(t.domain_name, opts.sipDomain),
    auth_types: t.auth_types,
    username: t.username,
    allowed_ips: t.allowed_ips,
    media_encryption: t.media_encryption,
    dtmf_mode: t.dtmf_mode,
    codecs: codecsOf(t.codecs, DEFAULT_TRUNK_CODECS),
    tm_create: formatLegacy(t.tm_create),
    tm_update: formatLegacy(t.tm_update),
    tm_delete: formatLegacy(t.tm_delete),
  };
}

export function trunksRepo(db: Db) {
  const table = () => db('trunks');
  const live = () => table().whereNull('tm_delete');
  return {
    async create(customerId: string, domainName: string, f: TrunkFields): Promise<TrunkRow> {
      const [row] = await table()
        .insert({ ...f, customer_id: customerId, domain_name: domainName, id: newId(), tm_create: clock.now() })
        .returning('*');
      return row as TrunkRow;
    },
    async getOwned(customerId: string, id: string): Promise<TrunkRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as TrunkRow | undefined) ?? null;
    },
    async getByDomain(domainName: string): Promise<TrunkRow | null> {
      return ((await live().where({ domain_name: domainName.toLowerCase() }).first()) as TrunkRow | undefined) ?? null;
    },
    /**
     * Trunks with ip authentication whose allowed_ips contain `ip` (most specific network first), each
     * with its customer's status read in the same statement (an inbound call's start: the account's
     * standing without another round trip; null: no customer row).
     */
    async findBySourceIpWithStanding(ip: string): Promise<TrunkWithStanding[]> {
      const rows = await db.raw(
        `SELECT t.*, max(masklen(a::cidr)) AS best, (SELECT c.status FROM customers c WHERE c.id = t.customer_id) AS customer_status
          FROM trunks t, unnest(t.allowed_ips) a
          WHERE t.tm_delete IS NULL AND 'ip' = ANY(t.auth_types) AND ?::inet <<= a::cidr
          GROUP BY t.id ORDER BY best DESC, t.tm_create ASC`,
        [ip],
      );
      return (rows.rows as (TrunkRow & { best?: number; customer_status: CustomerStatus | null })[]).map(({ best: _b, customer_status, ...r }) => ({
        trunk: r as TrunkRow,
        customerStatus: customer_status,
      }));
    },
    async update(id: string, f: Partial<TrunkFields>): Promise<TrunkRow | null> {
      const [row] = await live()
        .where({ id })
        .update({ ...f, tm_update: clock.now() })
        .returning('*');
      return (row as TrunkRow | undefined) ?? null;
    },
    async softDelete(id: string): Promise<TrunkRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as TrunkRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<TrunkRow>> {
      return toPage(await paginate<TrunkRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
  };
}
