/** providers: platform-wide outbound SIP gateways. The auth password is write-only on the API. */

import type { Db } from '../db/knex';
import { codecsOf, DEFAULT_TRUNK_CODECS, parseCodecList } from '../calls/codecs';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { ProviderRow } from '../db/rows/providers';
export type { ProviderRow } from '../db/rows/providers';

/** `codecs`: a list of names, or the comma-separated text providers took before (unknown names dropped; none known: the default). */
export type ProviderFields = Pick<ProviderRow, 'type' | 'hostname' | 'tech_prefix' | 'tech_postfix' | 'tech_headers' | 'transport' | 'auth_username' | 'auth_password' | 'name' | 'detail'> &
  Partial<Pick<ProviderRow, 'media_encryption'>> & { codecs?: readonly string[] | string };

export function providerJson(p: ProviderRow) {
  return {
    id: p.id,
    type: p.type,
    hostname: p.hostname,
    tech_prefix: p.tech_prefix,
    tech_postfix: p.tech_postfix,
    tech_headers: p.tech_headers ?? {},
    transport: p.transport,
    auth_username: p.auth_username,
    codecs: codecsOf(p.codecs, DEFAULT_TRUNK_CODECS).join(','),
    media_encryption: p.media_encryption,
    name: p.name,
    detail: p.detail,
    metadata: p.metadata ?? {},
    health_status: p.health_status,
    health_checked_at: formatLegacy(p.health_checked_at),
    tm_create: formatLegacy(p.tm_create),
    tm_update: formatLegacy(p.tm_update),
    tm_delete: formatLegacy(p.tm_delete),
  };
}

export function providersRepo(db: Db) {
  const table = () => db('providers');
  const live = () => table().whereNull('tm_delete');
  const enc = ({ tech_headers, codecs, ...rest }: Partial<ProviderFields>) => ({
    ...rest,
    ...(tech_headers ? { tech_headers: JSON.stringify(tech_headers) } : {}),
    ...(codecs !== undefined ? { codecs: [...codecsOf(parseCodecList(codecs).codecs, DEFAULT_TRUNK_CODECS)] } : {}),
  });
  return {
    async create(f: ProviderFields): Promise<ProviderRow> {
      const [row] = await table()
        .insert({ ...enc(f), id: newId(), tm_create: clock.now() })
        .returning('*');
      return row as ProviderRow;
    },
    async get(id: string): Promise<ProviderRow | null> {
      return ((await live().where({ id }).first()) as ProviderRow | undefined) ?? null;
    },
    async getMany(ids: string[]): Promise<ProviderRow[]> {
      return ids.length ? ((await live().whereIn('id', ids)) as ProviderRow[]) : [];
    },
    async update(id: string, f: Partial<ProviderFields>): Promise<ProviderRow | null> {
      const [row] = await live()
        .where({ id })
        .update({ ...enc(f), tm_update: clock.now() })
        .returning('*');
      return (row as ProviderRow | undefined) ?? null;
    },
    async softDelete(id: string): Promise<ProviderRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as ProviderRow | undefined) ?? null;
    },
    async list(params: PageParams): Promise<Page<ProviderRow>> {
      return toPage(await paginate<ProviderRow>(live().select('*'), params), (r) => r);
    },
  };
}

/** Every live provider (inbound matches a source address against their hosts). */
export async function liveProviders(db: Db): Promise<ProviderRow[]> {
  return (await db('providers').whereNull('tm_delete')) as ProviderRow[];
}
