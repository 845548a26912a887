/** customers: rows, JSON view (legacy timestamps with the 9999 sentinel), repository. */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import { firstPrepared, prepared } from '../db/prepared';
import type { CustomerRow, CustomerStatus } from '../db/rows/customers';
export { CUSTOMER_STATUSES, type CustomerRow, type CustomerStatus, IDENTITY_STATUSES, type IdentityVerificationStatus, WEBHOOK_METHODS, type WebhookMethod } from '../db/rows/customers';
/** The states in which an account gets no service (API 403, SIP 403): the one list of them. */
export const CLOSED_STATUSES = ['frozen', 'expired', 'deleted'] as const satisfies readonly CustomerStatus[];
export type ClosedStatus = (typeof CLOSED_STATUSES)[number];
export const isClosedStatus = (s: CustomerStatus): s is ClosedStatus => (CLOSED_STATUSES as readonly CustomerStatus[]).includes(s);

export type CustomerCreate = Partial<Omit<CustomerRow, 'id' | 'tm_create' | 'tm_update' | 'tm_delete'>> & { id?: string };
export type CustomerPatch = Partial<Omit<CustomerRow, 'id' | 'tm_create' | 'tm_update'>>;

/**
 * The webhook secret as a read shows it: its last 4 characters, the rest starred ('' when there is
 * none). Whole only in the answer of the rotation that made it (POST /customer/webhook_secret).
 */
export function maskWebhookSecret(secret: string): string {
  return secret.length > 4 ? `${'*'.repeat(secret.length - 4)}${secret.slice(-4)}` : '*'.repeat(secret.length);
}

/**
 * The customer as the API shows it. `secret` adds webhook_secret and webhook_secret_set (the account's
 * own /customer): 'masked' on reads, 'whole' only in the rotation's answer; left out elsewhere.
 */
export function customerJson(c: CustomerRow, opts: { secret?: 'masked' | 'whole' } = {}) {
  return {
    id: c.id,
    name: c.name,
    detail: c.detail,
    email: c.email,
    phone_number: c.phone_number,
    address: c.address,
    webhook_method: c.webhook_method,
    webhook_uri: c.webhook_uri,
    ...(opts.secret ? { webhook_secret: opts.secret === 'whole' ? c.webhook_secret : maskWebhookSecret(c.webhook_secret), webhook_secret_set: c.webhook_secret !== '' } : {}),
    billing_account_id: c.billing_account_id,
    metadata: c.metadata ?? {},
    email_verified: c.email_verified,
    status: c.status,
    identity_verification_status: c.identity_verification_status,
    tm_deletion_scheduled: formatLegacy(c.tm_deletion_scheduled),
    tm_create: formatLegacy(c.tm_create),
    tm_update: formatLegacy(c.tm_update),
    tm_delete: formatLegacy(c.tm_delete),
  };
}
export type CustomerJson = ReturnType<typeof customerJson>;

export function newWebhookSecret(): string {
  return randomBytes(24).toString('base64url');
}

/** What the account status gate needs. */
export interface CustomerStatusInfo {
  status: CustomerStatus;
  tm_deletion_scheduled: Date | null;
}

/**
 * Every column of customers, in table order: what `select *` returned. The hot read is a prepared
 * statement and must name its columns (core/db/prepared.ts); a migration that adds a column to
 * customers adds it here too (test/db/prepared.test.ts compares this list with the table).
 */
export const CUSTOMER_COLUMNS = [
  'id',
  'name',
  'detail',
  'email',
  'email_verified',
  'phone_number',
  'address',
  'webhook_method',
  'webhook_uri',
  'webhook_secret',
  'billing_account_id',
  'metadata',
  'status',
  'identity_verification_status',
  'terms_agreed_version',
  'terms_agreed_ip',
  'tm_deletion_scheduled',
  'tm_create',
  'tm_update',
  'tm_delete',
  'max_concurrent_pstn_calls',
  'twilio_token_generation',
] as const;

/** The live customer by id: every authenticated GET /v1.0/customer reads it. */
const getLive = prepared('customers_get_live', `select ${CUSTOMER_COLUMNS.join(', ')} from customers where id = $1 and tm_delete is null limit 1`);

export function customersRepo(db: Db) {
  const table = () => db('customers');
  return {
    async create(input: CustomerCreate): Promise<CustomerRow> {
      const row = {
        webhook_secret: newWebhookSecret(),
        billing_account_id: EMPTY_UUID,
        ...input,
        id: input.id ?? newId(),
        metadata: JSON.stringify(input.metadata ?? {}),
        tm_create: clock.now(),
      };
      const [created] = await table().insert(row).returning('*');
      return created as CustomerRow;
    },
    /** Live (not soft-deleted) customer by id; `includeDeleted` to see deleted ones too. */
    async get(id: string, opts: { includeDeleted?: boolean } = {}): Promise<CustomerRow | null> {
      if (!opts.includeDeleted) return firstPrepared<CustomerRow>(db, getLive, [id]);
      const q = table().where({ id });
      return ((await q.first()) as CustomerRow | undefined) ?? null;
    },
    async getByEmail(email: string): Promise<CustomerRow | null> {
      const row = await table().whereRaw('lower(email) = lower(?)', [email]).whereNull('tm_delete').first();
      return (row as CustomerRow | undefined) ?? null;
    },
    async statusOf(id: string): Promise<CustomerStatusInfo | null> {
      const row = await table().select('status', 'tm_deletion_scheduled').where({ id }).first();
      return (row as CustomerStatusInfo | undefined) ?? null;
    },
    async update(id: string, patch: CustomerPatch): Promise<CustomerRow | null> {
      const values: Record<string, unknown> = { ...patch, tm_update: clock.now() };
      if (patch.metadata) values.metadata = JSON.stringify(patch.metadata);
      const [row] = await table().where({ id }).whereNull('tm_delete').update(values).returning('*');
      return (row as CustomerRow | undefined) ?? null;
    },
    /** Soft delete: status deleted, tm_delete set. Related rows are the caller's (see cascade in the auth jobs). */
    async softDelete(id: string): Promise<CustomerRow | null> {
      const now = clock.now();
      const [row] = await table().where({ id }).whereNull('tm_delete').update({ status: 'deleted', tm_delete: now, tm_update: now }).returning('*');
      return (row as CustomerRow | undefined) ?? null;
    },
    async list(params: PageParams, filter: { status?: CustomerStatus } = {}): Promise<Page<CustomerRow>> {
      const q = table().whereNull('tm_delete').select('*');
      if (filter.status) q.where({ status: filter.status });
      return toPage(await paginate<CustomerRow>(q, params), (r) => r);
    },
    /**
     * Raises the live customer's Twilio AuthToken generation by one (core/twilio/auth-token.ts: the
     * previous token stops working); the new generation, or null for no live customer.
     */
    async rotateTwilioToken(id: string): Promise<Pick<CustomerRow, 'id' | 'twilio_token_generation'> | null> {
      const [row] = (await table()
        .where({ id })
        .whereNull('tm_delete')
        .increment('twilio_token_generation', 1)
        .update({ tm_update: clock.now() })
        .returning(['id', 'twilio_token_generation'])) as Pick<CustomerRow, 'id' | 'twilio_token_generation'>[];
      return row ?? null;
    },
    /** A new webhook signing secret for the live customer (the previous one signs nothing from now on); the row, or null. */
    async rotateWebhookSecret(id: string): Promise<CustomerRow | null> {
      const [row] = await table().where({ id }).whereNull('tm_delete').update({ webhook_secret: newWebhookSecret(), tm_update: clock.now() }).returning('*');
      return (row as CustomerRow | undefined) ?? null;
    },
    async count(): Promise<number> {
      const [{ n }] = (await db('customers').count({ n: '*' })) as { n: string | number }[];
      return Number(n);
    },
  };
}
export type CustomersRepo = ReturnType<typeof customersRepo>;

/** A live customer's row, locked until the caller's transaction ends (status changes take this lock). */
export async function lockLiveCustomer(trx: Db, id: string): Promise<CustomerRow | undefined> {
  return trx<CustomerRow>('customers').where({ id }).whereNull('tm_delete').forUpdate().first();
}

/** The account's webhook settings (deleted accounts too). */
export interface CustomerWebhookRow {
  id: string;
  webhook_uri: string;
  webhook_method: string;
  metadata: unknown;
}

/** The webhook settings of each of `ids` that exists. */
export async function customerWebhooksOf(db: Db, ids: string[]): Promise<CustomerWebhookRow[]> {
  return (await db('customers').whereIn('id', ids).select('id', 'webhook_uri', 'webhook_method', 'metadata')) as CustomerWebhookRow[];
}

/** The account's webhook address and method, or undefined for no such customer. */
export async function customerWebhookOf(db: Db, id: string): Promise<{ webhook_uri: string; webhook_method: string } | undefined> {
  return (await db('customers').where({ id }).first('webhook_uri', 'webhook_method')) as { webhook_uri: string; webhook_method: string } | undefined;
}

/** The secret the account's webhook deliveries are signed with, or undefined for no such customer. */
export async function customerWebhookSecretOf(db: Db, id: string): Promise<string | undefined> {
  const row = (await db('customers').where({ id }).first('webhook_secret')) as { webhook_secret: string } | undefined;
  return row?.webhook_secret;
}
