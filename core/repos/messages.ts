/**
 * messages (SMS) and message_targets: one message row, one target row per destination, each target
 * with its own delivery status. Status moves only forward (core/messaging/status.ts); the update
 * is a compare-and-set so concurrent callbacks cannot move a target back.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, type Page, type PageParams } from '../pagination';
import type { Address } from '../address';
import type { MessageDirection, MessageRow, TargetRow, TargetStatus } from '../db/rows/messages';
export { type MessageDirection, type MessageRow, TARGET_STATUSES, type TargetRow, type TargetStatus } from '../db/rows/messages';

export type { Address };

export interface MessageWithTargets extends MessageRow {
  targets: TargetRow[];
}

export function messageJson(m: MessageWithTargets) {
  return {
    id: m.id,
    customer_id: m.customer_id,
    type: m.type,
    source: m.source,
    targets: [...m.targets].sort((a, b) => a.idx - b.idx).map((t) => ({ destination: t.destination, status: t.status, parts: t.parts, tm_update: formatLegacy(t.tm_update) })),
    text: m.text,
    direction: m.direction,
    tm_create: formatLegacy(m.tm_create),
    tm_update: formatLegacy(m.tm_update),
    tm_delete: formatLegacy(m.tm_delete),
  };
}

export interface MessageCreate {
  id?: string;
  customer_id: string;
  source: Address;
  text: string;
  direction: MessageDirection;
  provider?: string;
  targets: { destination: Address; status: TargetStatus; parts: number; provider_ref?: string }[];
}

export function messagesRepo(db: Db) {
  const messages = () => db('messages');
  const targets = () => db('message_targets');

  async function withTargets(rows: MessageRow[]): Promise<MessageWithTargets[]> {
    if (rows.length === 0) return [];
    const all = (await targets()
      .whereIn(
        'message_id',
        rows.map((r) => r.id),
      )
      .orderBy('idx')) as TargetRow[];
    return rows.map((r) => ({ ...r, targets: all.filter((t) => t.message_id === r.id) }));
  }

  return {
    async create(input: MessageCreate): Promise<MessageWithTargets> {
      const now = clock.now();
      const id = input.id ?? newId();
      const [row] = await messages()
        .insert({
          id,
          customer_id: input.customer_id,
          type: 'sms',
          source: JSON.stringify(input.source),
          text: input.text,
          direction: input.direction,
          provider: input.provider ?? '',
          tm_create: now,
          tm_update: now,
        })
        .returning('*');
      const trows = input.targets.map((t, idx) => ({
        id: newId(),
        message_id: id,
        idx,
        destination: JSON.stringify(t.destination),
        status: t.status,
        parts: t.parts,
        provider_ref: t.provider_ref ?? '',
        tm_update: now,
      }));
      const created = trows.length ? ((await targets().insert(trows).returning('*')) as TargetRow[]) : [];
      return { ...(row as MessageRow), targets: created };
    },
    async getOwned(customerId: string, id: string): Promise<MessageWithTargets | null> {
      const row = (await messages().where({ id, customer_id: customerId }).whereNull('tm_delete').first()) as MessageRow | undefined;
      return row ? (await withTargets([row]))[0]! : null;
    },
    async get(id: string): Promise<MessageWithTargets | null> {
      const row = (await messages().where({ id }).first()) as MessageRow | undefined;
      return row ? (await withTargets([row]))[0]! : null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<MessageWithTargets>> {
      const q = messages().where({ customer_id: customerId }).whereNull('tm_delete').select('*');
      const p = await paginate<MessageRow>(q, params);
      return { result: await withTargets(p.rows), next_page_token: p.nextPageToken };
    },
    async softDelete(customerId: string, id: string): Promise<MessageWithTargets | null> {
      const now = clock.now();
      const [row] = await messages().where({ id, customer_id: customerId }).whereNull('tm_delete').update({ tm_delete: now, tm_update: now }).returning('*');
      return row ? (await withTargets([row as MessageRow]))[0]! : null;
    },
    async targetByRef(providerRef: string): Promise<TargetRow | null> {
      if (!providerRef) return null;
      return ((await targets().where({ provider_ref: providerRef }).first()) as TargetRow | undefined) ?? null;
    },
    async target(id: string): Promise<TargetRow | null> {
      return ((await targets().where({ id }).first()) as TargetRow | undefined) ?? null;
    },
    /** Compare-and-set: moves the target to `to` only while its status is one of `from`. */
    async moveTarget(targetId: string, from: readonly TargetStatus[], patch: { status: TargetStatus; provider_ref?: string; error?: string; parts?: number }): Promise<TargetRow | null> {
      const now = clock.now();
      const [row] = await targets()
        .where({ id: targetId })
        .whereIn('status', from as TargetStatus[])
        .update({ ...patch, tm_update: now })
        .returning('*');
      if (!row) return null;
      await messages()
        .where({ id: (row as TargetRow).message_id })
        .update({ tm_update: now });
      return row as TargetRow;
    },
    /** Records the provider reference without a status change. */
    async setProviderRef(targetId: string, providerRef: string): Promise<void> {
      await targets().where({ id: targetId }).update({ provider_ref: providerRef });
    },
  };
}
