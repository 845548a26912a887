/**
 * extensions and customer_domains. The password is write-only on the API: `extensionJson` leaves it
 * out unless asked for (the create response), and only the provisioning URL serves it later.
 */
import type { Db } from '../db/knex';

import { codecsOf, DEFAULT_EXTENSION_CODECS } from '../calls/codecs';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacyOrEmpty } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { ExtensionRow, ProvisioningCustomerSecretRow, ProvisioningTokenRow } from '../db/rows/extensions';
export type { ExtensionRow, ProvisioningCustomerSecretRow, ProvisioningTokenRow, VoicemailOn } from '../db/rows/extensions';

type VoicemailFields = 'mwi_unsolicited' | 'voicemail_on' | 'voicemail_timeout';

export type ExtensionCreate = Pick<ExtensionRow, 'customer_id' | 'extension' | 'domain_name' | 'username' | 'password' | 'direct_hash'> &
  Partial<Pick<ExtensionRow, 'name' | 'detail' | 'digest_algorithms' | 'media_encryption' | 'mac' | 'dtmf_mode' | 'codecs' | 'blf_keys' | 'pickup_groups' | VoicemailFields>>;

/** The Extension resource; `direct_uri` is the direct SIP URI built from direct_hash. */
export function extensionJson(e: ExtensionRow, opts: { sipDomain: string; withPassword?: boolean }) {
  return {
    id: e.id,
    customer_id: e.customer_id,
    name: e.name,
    detail: e.detail,
    extension: e.extension,
    domain_name: e.domain_name,
    username: e.username,
    ...(opts.withPassword ? { password: e.password } : {}),
    direct_hash: e.direct_hash,
    digest_algorithms: e.digest_algorithms,
    media_encryption: e.media_encryption,
    mac: e.mac ?? null,
    dtmf_mode: e.dtmf_mode,
    codecs: codecsOf(e.codecs, DEFAULT_EXTENSION_CODECS),
    blf_keys: e.blf_keys ?? [],
    pickup_groups: e.pickup_groups ?? [],
    mwi_unsolicited: e.mwi_unsolicited,
    voicemail_on: e.voicemail_on,
    voicemail_timeout: e.voicemail_timeout,
    direct_uri: `sip:direct.${e.direct_hash}@${opts.sipDomain}`,
    tm_create: formatLegacyOrEmpty(e.tm_create),
    tm_update: formatLegacyOrEmpty(e.tm_update),
    tm_delete: formatLegacyOrEmpty(e.tm_delete),
  };
}

export function extensionsRepo(db: Db) {
  const table = () => db('extensions');
  const live = () => table().whereNull('tm_delete');
  return {
    async create(input: ExtensionCreate): Promise<ExtensionRow> {
      const [row] = await table()
        .insert({ name: '', detail: '', ...input, id: newId(), tm_create: clock.now() })
        .returning('*');
      return row as ExtensionRow;
    },
    async get(id: string): Promise<ExtensionRow | null> {
      return ((await live().where({ id }).first()) as ExtensionRow | undefined) ?? null;
    },
    /** Live extension of `customerId` with id `id`: other customers' rows are not found. */
    async getOwned(customerId: string, id: string): Promise<ExtensionRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as ExtensionRow | undefined) ?? null;
    },
    /** Registrar lookup: the AOR `username@domain_name`. */
    async getByAor(username: string, domainName: string): Promise<ExtensionRow | null> {
      return ((await live().where({ username, domain_name: domainName.toLowerCase() }).first()) as ExtensionRow | undefined) ?? null;
    },
    /** Dialling an extension by its `extension` value within a customer. */
    async getByExtension(customerId: string, extension: string): Promise<ExtensionRow | null> {
      return ((await live().where({ customer_id: customerId, extension }).first()) as ExtensionRow | undefined) ?? null;
    },
    /** The direct SIP URI `sip:direct.<hash>@…` (hash without the `direct.` prefix). */
    async getByDirectHash(hash: string): Promise<ExtensionRow | null> {
      return ((await live().where({ direct_hash: hash }).first()) as ExtensionRow | undefined) ?? null;
    },
    /** The customer's live extension bound to the desk phone `mac` (12 lowercase hex digits). */
    /** Which of `extensions` are live extensions of the customer. */
    async existing(customerId: string, extensions: readonly string[]): Promise<string[]> {
      if (!extensions.length) return [];
      const rows = (await live()
        .where({ customer_id: customerId })
        .whereIn('extension', [...extensions])
        .select('extension')) as { extension: string }[];
      return rows.map((r) => r.extension);
    },
    async getByMac(customerId: string, mac: string): Promise<ExtensionRow | null> {
      return ((await live().where({ customer_id: customerId, mac }).first()) as ExtensionRow | undefined) ?? null;
    },
    async update(
      id: string,
      patch: Partial<
        Pick<ExtensionRow, 'name' | 'detail' | 'password' | 'direct_hash' | 'digest_algorithms' | 'media_encryption' | 'mac' | 'dtmf_mode' | 'codecs' | 'blf_keys' | 'pickup_groups' | VoicemailFields>
      >,
    ): Promise<ExtensionRow | null> {
      const [row] = await live()
        .where({ id })
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return (row as ExtensionRow | undefined) ?? null;
    },
    async softDelete(id: string): Promise<ExtensionRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as ExtensionRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<ExtensionRow>> {
      const q = live().where({ customer_id: customerId }).select('*');
      return toPage(await paginate<ExtensionRow>(q, params), (r) => r);
    },
    /** The customer's live extensions in extension order, at most `limit` (the busy lamps page). */
    async allOf(customerId: string, limit: number): Promise<ExtensionRow[]> {
      return (await live().where({ customer_id: customerId }).orderBy('extension').limit(limit).select('*')) as ExtensionRow[];
    },
    /** The customer's live extensions in any of `groups` (group pickup). */
    async inPickupGroups(customerId: string, groups: string[]): Promise<ExtensionRow[]> {
      if (!groups.length) return [];
      return (await live().where({ customer_id: customerId }).whereRaw('pickup_groups && ?::text[]', [groups]).select('*')) as ExtensionRow[];
    },
  };
}

export function customerDomainsRepo(db: Db) {
  return {
    async getLabel(customerId: string): Promise<string | null> {
      const row = await db('customer_domains').where({ customer_id: customerId }).first('label');
      return (row?.label as string | undefined) ?? null;
    },
    async getCustomerByLabel(label: string): Promise<string | null> {
      const row = await db('customer_domains').where({ label }).first('customer_id');
      return (row?.customer_id as string | undefined) ?? null;
    },
    /** Inserts `label` for the customer; false when the label (or the customer's row) already exists. */
    async tryInsert(customerId: string, label: string): Promise<boolean> {
      const res = await db.raw(`INSERT INTO customer_domains (customer_id, label, tm_create) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, [customerId, label, clock.now()]);
      return (res as { rowCount: number }).rowCount === 1;
    },
  };
}

export function provisioningTokensRepo(db: Db) {
  const table = () => db('provisioning_tokens');
  return {
    async create(row: Omit<ProvisioningTokenRow, 'tm_create'>): Promise<void> {
      await table().insert({ ...row, tm_create: clock.now() });
    },
    /** The token if it exists and has not expired by the platform clock. */
    async getValid(tokenHash: string): Promise<ProvisioningTokenRow | null> {
      const row = await table().where({ token_hash: tokenHash }).where('tm_expire', '>', clock.now()).first();
      return (row as ProvisioningTokenRow | undefined) ?? null;
    },
    async purgeExpired(): Promise<number> {
      return table().where('tm_expire', '<=', clock.now()).delete();
    },
  };
}

/** One DHCP option 66 provisioning secret per customer (its sha256). */
export function provisioningCustomerSecretsRepo(db: Db) {
  const table = () => db('provisioning_customer_secrets');
  return {
    /** Sets the customer's secret, replacing the one before (which stops working). */
    async replace(customerId: string, secretHash: string): Promise<ProvisioningCustomerSecretRow> {
      const row = { customer_id: customerId, secret_hash: secretHash, tm_create: clock.now() };
      const [out] = await table().insert(row).onConflict('customer_id').merge().returning('*');
      return out as ProvisioningCustomerSecretRow;
    },
    async get(customerId: string): Promise<ProvisioningCustomerSecretRow | null> {
      return ((await table().where({ customer_id: customerId }).first()) as ProvisioningCustomerSecretRow | undefined) ?? null;
    },
    async getByHash(secretHash: string): Promise<ProvisioningCustomerSecretRow | null> {
      return ((await table().where({ secret_hash: secretHash }).first()) as ProvisioningCustomerSecretRow | undefined) ?? null;
    },
    async remove(customerId: string): Promise<boolean> {
      return (await table().where({ customer_id: customerId }).delete()) > 0;
    },
  };
}
