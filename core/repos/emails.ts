/** emails: one row per email; status follows the SMTP hand-over (core/email/send.ts). */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { EmailRow, EmailStatus } from '../db/rows/emails';
export { EMAIL_STATUSES, type EmailAttachment, type EmailRow, type EmailStatus } from '../db/rows/emails';

export function emailJson(e: EmailRow) {
  return {
    id: e.id,
    customer_id: e.customer_id,
    activeflow_id: e.activeflow_id,
    source: e.source,
    destinations: e.destinations,
    status: e.status,
    subject: e.subject,
    content: e.content,
    attachments: e.attachments,
    tm_create: formatLegacy(e.tm_create),
    tm_update: formatLegacy(e.tm_update),
    tm_delete: formatLegacy(e.tm_delete),
  };
}

export function emailsRepo(db: Db) {
  const table = () => db('emails');
  const live = () => table().whereNull('tm_delete');
  return {
    async create(input: Pick<EmailRow, 'customer_id' | 'source' | 'destinations' | 'subject' | 'content' | 'attachments'> & { id?: string; activeflow_id?: string }): Promise<EmailRow> {
      const now = clock.now();
      const [row] = await table()
        .insert({
          id: input.id ?? newId(),
          customer_id: input.customer_id,
          activeflow_id: input.activeflow_id ?? EMPTY_UUID,
          source: JSON.stringify(input.source),
          destinations: JSON.stringify(input.destinations),
          status: 'initiated',
          subject: input.subject,
          content: input.content,
          attachments: JSON.stringify(input.attachments),
          tm_create: now,
          tm_update: now,
        })
        .returning('*');
      return row as EmailRow;
    },
    async get(id: string): Promise<EmailRow | null> {
      return ((await table().where({ id }).first()) as EmailRow | undefined) ?? null;
    },
    async getOwned(customerId: string, id: string): Promise<EmailRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as EmailRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<EmailRow>> {
      return toPage(await paginate<EmailRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    /** Compare-and-set on status. */
    async move(id: string, from: readonly EmailStatus[], patch: { status: EmailStatus; provider_ref?: string; error?: string }): Promise<EmailRow | null> {
      const [row] = await table()
        .where({ id })
        .whereIn('status', from as EmailStatus[])
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return (row as EmailRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<EmailRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as EmailRow | undefined) ?? null;
    },
  };
}
