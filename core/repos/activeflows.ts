/**
 * activeflows: the Postgres side of the flow runner's ActiveflowStore (media-app/flow/stores.ts),
 * its record type declared once in core/flow/activeflow.ts (core must not import media-app).
 *
 * The runner shares one append-only executed_actions array between the records it hands over, so
 * a record is serialized synchronously when it arrives, and writes of one activeflow are chained
 * (a later update never lands before an earlier one). Executed actions already stored are not
 * rewritten: an update appends only the new ones.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID } from '../ids';
import { formatRfc3339, parseTimestamp } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';

import type { ActiveflowRecord, ExecutedAction } from '../flow/activeflow';
import type { ActiveflowRow } from '../db/rows/activeflows';
export type { ActiveflowRow } from '../db/rows/activeflows';

/** The record the flow runner hands the store (core/flow/activeflow.ts), under the names this repository exported. */
export type { ExecutedAction as ActiveflowExecutedAction, ActiveflowRecord as ActiveflowRecordShape };

/** The Activeflow resource (voipbin FlowManagerActiveflow) plus variables and why it ended. */
export function activeflowJson(a: ActiveflowRow) {
  return {
    id: a.id,
    customer_id: a.customer_id,
    flow_id: a.flow_id,
    status: a.status,
    reference_type: a.reference_type,
    reference_id: a.reference_id,
    reference_activeflow_id: a.reference_activeflow_id,
    on_complete_flow_id: a.on_complete_flow_id,
    webhook_uri: a.webhook_uri,
    webhook_method: a.webhook_method,
    current_action: a.current_action,
    // Unset is the empty UUID (spec: "The empty UUID ... means a null or unset reference"); rows
    // written by the API and the campaign dialer keep '' for it.
    forward_action_id: a.forward_action_id || EMPTY_UUID,
    executed_actions: a.executed_actions,
    variables: a.variables,
    complete_count: a.complete_count,
    end_reason: a.end_reason,
    error: a.error,
    tm_create: formatRfc3339(a.tm_create),
    tm_update: formatRfc3339(a.tm_update),
    tm_delete: formatRfc3339(a.tm_delete),
  };
}

function toDate(s: string | null | undefined): Date | null {
  return s ? parseTimestamp(s) : null;
}

function toRecord(r: ActiveflowRow): ActiveflowRecord {
  return {
    ...r,
    tm_create: formatRfc3339(r.tm_create) as string,
    tm_update: formatRfc3339(r.tm_update ?? r.tm_create) as string,
    tm_delete: formatRfc3339(r.tm_delete),
  };
}

/** Columns of a record, serialized now (the runner mutates its arrays later). */
function columns(rec: ActiveflowRecord) {
  return {
    customer_id: rec.customer_id,
    flow_id: rec.flow_id || EMPTY_UUID,
    status: rec.status,
    reference_type: rec.reference_type,
    reference_id: rec.reference_id || EMPTY_UUID,
    reference_activeflow_id: rec.reference_activeflow_id || EMPTY_UUID,
    on_complete_flow_id: rec.on_complete_flow_id || EMPTY_UUID,
    webhook_uri: rec.webhook_uri,
    webhook_method: rec.webhook_method,
    current_action: rec.current_action ? JSON.stringify(rec.current_action) : null,
    forward_action_id: rec.forward_action_id,
    variables: JSON.stringify(rec.variables),
    complete_count: rec.complete_count,
    end_reason: rec.end_reason,
    error: rec.error,
    tm_update: toDate(rec.tm_update) ?? clock.now(),
    tm_delete: toDate(rec.tm_delete),
  };
}

export function activeflowsRepo(db: Db) {
  const table = () => db('activeflows');
  const live = () => table().whereNull('tm_delete');
  return {
    async insert(rec: ActiveflowRecord): Promise<ActiveflowRow> {
      const row = { ...columns(rec), id: rec.id, executed_actions: JSON.stringify(rec.executed_actions), tm_create: toDate(rec.tm_create) ?? clock.now() };
      const [created] = await table().insert(row).returning('*');
      return created as ActiveflowRow;
    },
    async get(id: string): Promise<ActiveflowRow | null> {
      return ((await table().where({ id }).first()) as ActiveflowRow | undefined) ?? null;
    },
    async getOwned(customerId: string, id: string): Promise<ActiveflowRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as ActiveflowRow | undefined) ?? null;
    },
    /** The newest running activeflow of a customer's call (a Twilio redirect's wait for the call's flow). */
    async runningForCall(customerId: string, callId: string): Promise<ActiveflowRow | null> {
      return (
        ((await live().where({ customer_id: customerId, reference_type: 'call', reference_id: callId, status: 'running' }).orderBy('tm_create', 'desc').first()) as ActiveflowRow | undefined) ?? null
      );
    },
    async list(customerId: string, params: PageParams): Promise<Page<ActiveflowRow>> {
      const q = live().where({ customer_id: customerId }).select('*');
      return toPage(await paginate<ActiveflowRow>(q, params), (r) => r);
    },
    /** Ends a running activeflow whose runner is gone (no live owner); no-op when it already ended. */
    async endOrphan(id: string, reason: ActiveflowRecord['end_reason'], error = ''): Promise<ActiveflowRow | null> {
      const [row] = await table().where({ id, status: 'running' }).update({ status: 'ended', end_reason: reason, error, current_action: null, tm_update: clock.now() }).returning('*');
      return (row as ActiveflowRow | undefined) ?? (await this.get(id));
    },
    /** Soft delete (DELETE /activeflows/{id}); the runner's later writes keep tm_delete (PgActiveflowStore.update). */
    async softDelete(customerId: string, id: string): Promise<ActiveflowRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as ActiveflowRow | undefined) ?? null;
    },
  };
}

/** ActiveflowStore over Postgres (structurally the interface of media-app/flow/stores.ts). */
export class PgActiveflowStore {
  /** How many executed actions are stored per activeflow, to append only the new ones. */
  private readonly stored = new Map<string, number>();
  private readonly chains = new Map<string, Promise<void>>();

  /**
   * `retry` (core/db/retry.ts) repeats each write through a short database outage, inside the
   * per-activeflow chain so that writes still land in order.
   */
  constructor(
    private readonly db: Db,
    private readonly opts: { retry?: <T>(op: () => Promise<T>) => Promise<T> } = {},
  ) {}

  create(record: ActiveflowRecord): Promise<void> {
    const cols = columns(record);
    const executed = JSON.stringify(record.executed_actions);
    const tmCreate = toDate(record.tm_create) ?? clock.now();
    // The count is what the table will hold once every queued write has run (writes are chained).
    this.stored.set(record.id, record.executed_actions.length);
    let attempts = 0;
    return this.chain(record.id, async () => {
      try {
        attempts++;
        await this.db('activeflows').insert({ ...cols, id: record.id, executed_actions: executed, tm_create: tmCreate });
      } catch (err) {
        // a retried insert whose first attempt committed unseen: the row is there
        if (attempts > 1 && (err as { code?: string }).code === '23505') return;
        throw err;
      }
    });
  }

  update(record: ActiveflowRecord): Promise<void> {
    // A runner's record never deletes; a deletion made through the API (tm_delete set) must survive its writes.
    const { tm_delete: deleted, ...rest } = columns(record);
    const cols = deleted ? { ...rest, tm_delete: deleted } : rest;
    const total = record.executed_actions.length;
    const known = this.stored.get(record.id);
    // Serialize now: only the tail when the stored prefix is known, the whole array otherwise.
    const append = known !== undefined && known <= total ? JSON.stringify(record.executed_actions.slice(known)) : null;
    const full = append === null ? JSON.stringify(record.executed_actions) : null;
    if (record.status === 'ended') this.stored.delete(record.id);
    else this.stored.set(record.id, total);
    let attempts = 0;
    return this.chain(record.id, async () => {
      // a retried append could append twice after an unseen commit: retries write the whole array
      const executed = append !== null && ++attempts === 1 ? this.db.raw(`executed_actions || ?::jsonb`, [append]) : (full ?? JSON.stringify(record.executed_actions.slice(0, total)));
      await this.db('activeflows')
        .where({ id: record.id })
        .update({ ...cols, executed_actions: executed });
    });
  }

  async get(id: string): Promise<ActiveflowRecord | undefined> {
    await this.chains.get(id);
    const row = (await this.db('activeflows').where({ id }).first()) as ActiveflowRow | undefined;
    return row ? toRecord(row) : undefined;
  }

  async list(opts: { customer_id?: string; limit: number; before?: string }): Promise<ActiveflowRecord[]> {
    const q = this.db('activeflows').whereNull('tm_delete');
    if (opts.customer_id) q.where({ customer_id: opts.customer_id });
    const before = opts.before ? toDate(opts.before) : null;
    if (before) q.where('tm_create', '<', before);
    const rows = (await q
      .orderBy([
        { column: 'tm_create', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(opts.limit)) as ActiveflowRow[];
    return rows.map(toRecord);
  }

  private chain(id: string, work: () => Promise<void>): Promise<void> {
    const prev = this.chains.get(id) ?? Promise.resolve();
    const run = this.opts.retry ? () => this.opts.retry!(work) : work;
    const next = prev
      .catch(() => undefined)
      .then(run)
      .catch((err: unknown) => {
        // A failed write leaves the stored prefix unknown: the next update writes the whole array.
        this.stored.delete(id);
        throw err;
      });
    this.chains.set(id, next);
    void next
      .finally(() => {
        if (this.chains.get(id) === next) this.chains.delete(id);
      })
      .catch(() => undefined);
    return next;
  }
}

/** The activeflow's own webhook settings (deleted or not), or undefined for no such activeflow of the customer. */
export async function activeflowWebhookOf(db: Db, customerId: string, id: string): Promise<{ webhook_uri: string; webhook_method: string } | undefined> {
  return (await db('activeflows').where({ id, customer_id: customerId }).first('webhook_uri', 'webhook_method')) as { webhook_uri: string; webhook_method: string } | undefined;
}

/** The status of a customer's live activeflow, or undefined for none. */
export async function activeflowStatusOf(db: Db, customerId: string, id: string): Promise<string | undefined> {
  const row = (await db('activeflows').where({ id, customer_id: customerId }).whereNull('tm_delete').first('status')) as { status: string } | undefined;
  return row?.status;
}
