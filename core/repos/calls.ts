/**
 * calls: every status change is a guarded UPDATE (only from an allowed predecessor), so a duplicate or
 * late command (BullMQ delivers at least once) changes nothing and reports `changed: false`.
 */
import type { Db, Knex } from '../db/knex';
import type { Address } from '../address';
import type { CallQuality } from '../quality/leg';
import { clock } from '../clock';
import { platformMetrics } from '../metrics';
import { EMPTY_UUID, newId } from '../ids';
import { formatRfc3339 } from '../time';
import { nodeLabel } from '../calls/node-keys';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import { hangupByFor, hangupReasonFor, predecessorsOf, type CallStatus, type HangupCause, type MuteDirection } from '../calls/model';
import type { CallRow } from '../db/rows/calls';
export type { CallRow } from '../db/rows/calls';

export type { Address };

export type CallCreate = Pick<CallRow, 'customer_id' | 'source' | 'destination' | 'direction'> &
  Partial<Pick<CallRow, 'id' | 'flow_id' | 'activeflow_id' | 'type' | 'master_call_id' | 'groupcall_id' | 'status' | 'data' | 'metadata' | 'sip_call_id' | 'node_id' | 'owner_id' | 'owner_type'>>;

/** The Call as the API and events show it (spec: calls use RFC 3339 or null timestamps). */
export function callJson(c: CallRow) {
  return {
    id: c.id,
    customer_id: c.customer_id,
    owner_type: c.owner_type,
    owner_id: c.owner_id,
    flow_id: c.flow_id,
    activeflow_id: c.activeflow_id,
    type: c.type,
    master_call_id: c.master_call_id,
    chained_call_ids: c.chained_call_ids,
    recording_id: c.recording_id,
    recording_ids: c.recording_ids,
    groupcall_id: c.groupcall_id,
    source: c.source,
    destination: c.destination,
    status: c.status,
    metadata: c.metadata,
    direction: c.direction,
    mute_direction: c.mute_direction,
    hangup_by: c.hangup_by,
    hangup_reason: c.hangup_reason,
    tm_ringing: formatRfc3339(c.tm_ringing),
    tm_progressing: formatRfc3339(c.tm_progressing),
    tm_hangup: formatRfc3339(c.tm_hangup),
    tm_create: formatRfc3339(c.tm_create),
    tm_update: formatRfc3339(c.tm_update),
    tm_delete: formatRfc3339(c.tm_delete),
    node_id: nodeLabel(c.node_id ?? ''),
    quality: c.quality ?? null,
  };
}

export interface Transition {
  changed: boolean;
  call: CallRow | null;
}

/**
 * Work a caller runs in the hangup's own transaction once this write ended the row (the billing step,
 * core/billing/call-end.ts): the row is never ended without it, and it never runs twice.
 */
export type HangupStep = (trx: Knex.Transaction, call: CallRow) => Promise<void>;

export function callsRepo(db: Db) {
  const table = () => db('calls');
  const live = () => table().whereNull('tm_delete');
  const stampFor: Partial<Record<CallStatus, keyof CallRow>> = {
    ringing: 'tm_ringing',
    progressing: 'tm_progressing',
    hangup: 'tm_hangup',
  };

  return {
    async create(input: CallCreate): Promise<CallRow> {
      const row = {
        id: input.id ?? newId(),
        owner_id: EMPTY_UUID,
        owner_type: '',
        flow_id: EMPTY_UUID,
        activeflow_id: EMPTY_UUID,
        type: 'flow' as const,
        master_call_id: EMPTY_UUID,
        recording_id: EMPTY_UUID,
        groupcall_id: EMPTY_UUID,
        status: 'dialing' as const,
        data: {},
        metadata: {},
        ...input,
        source: JSON.stringify(input.source),
        destination: JSON.stringify(input.destination),
        tm_create: clock.now(),
      };
      const [created] = await table().insert(row).returning('*');
      return created as CallRow;
    },
    async get(id: string): Promise<CallRow | null> {
      return ((await table().where({ id }).first()) as CallRow | undefined) ?? null;
    },
    /**
     * The progressing calls on nodes other than `notNode` whose party is extension `ext` of the customer
     * (the leg rung to it, or the call it placed), newest first (a supervise code's target elsewhere).
     */
    async progressingOfExtensionElsewhere(customerId: string, ext: string, notNode: string, max = 5): Promise<{ id: string; node_id: string }[]> {
      return (await table()
        .where({ customer_id: customerId, status: 'progressing' })
        .whereNot({ node_id: notNode })
        .whereRaw(
          `((direction = 'incoming' and source->>'type' = 'extension' and source->>'target' = ?) or (direction = 'outgoing' and destination->>'type' = 'extension' and destination->>'target' = ?))`,
          [ext, ext],
        )
        .orderBy('tm_create', 'desc')
        .limit(max)
        .select('id', 'node_id')) as { id: string; node_id: string }[];
    },
    async getOwned(customerId: string, id: string): Promise<CallRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as CallRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<CallRow>> {
      const q = live().where({ customer_id: customerId }).select('*');
      return toPage(await paginate<CallRow>(q, params), (r) => r);
    },
    /** Moves the call to `to` only from an allowed predecessor; stamps tm_ringing/tm_progressing. */
    async transition(id: string, to: Exclude<CallStatus, 'hangup'>, patch: Partial<Pick<CallRow, 'sip_call_id' | 'node_id'>> = {}): Promise<Transition> {
      const now = clock.now();
      const stamp = stampFor[to];
      const update: Record<string, unknown> = { ...patch, status: to, tm_update: now };
      if (stamp) update[stamp] = now;
      const [row] = await table().where({ id }).whereIn('status', predecessorsOf(to)).update(update).returning('*');
      if (row) return { changed: true, call: row as CallRow };
      return { changed: false, call: await this.get(id) };
    },
    /**
     * Moves the call from exactly `from` to `to` (the owner's guarded write: nothing changes when the
     * row is no longer in the status its owner saw); stamps tm_ringing/tm_progressing.
     */
    async transitionFrom(id: string, from: CallStatus, to: Exclude<CallStatus, 'hangup'>, fields: Partial<Pick<CallRow, 'activeflow_id' | 'flow_id'>> = {}): Promise<Transition> {
      const now = clock.now();
      const stamp = stampFor[to];
      const update: Record<string, unknown> = { ...fields, status: to, tm_update: now };
      if (stamp) update[stamp] = now;
      const [row] = await table().where({ id, status: from }).update(update).returning('*');
      if (row) return { changed: true, call: row as CallRow };
      return { changed: false, call: await this.get(id) };
    },
    /**
     * Ends the call once: hangup_by and hangup_reason derive from the status it had (core/calls/model.ts).
     * `steps` run in the same transaction, only when this write ended the row (the caller's billing step).
     */
    async hangup(id: string, cause: HangupCause, steps: readonly HangupStep[] = [], fields: Partial<Pick<CallRow, 'activeflow_id' | 'flow_id'>> = {}): Promise<Transition> {
      const t = await db.transaction(async (trx): Promise<Transition> => {
        const current = (await trx('calls').where({ id }).forUpdate().first()) as CallRow | undefined;
        if (!current) return { changed: false, call: null };
        if (current.status === 'hangup') return { changed: false, call: current };
        const now = clock.now();
        const [row] = await trx('calls')
          .where({ id })
          .update({
            ...fields,
            status: 'hangup',
            hangup_by: hangupByFor(current.status),
            hangup_reason: hangupReasonFor(current.direction, current.status, cause),
            tm_hangup: now,
            tm_update: now,
          })
          .returning('*');
        for (const step of steps) await step(trx, row as CallRow);
        return { changed: true, call: row as CallRow };
      });
      // once per call, after the commit (calls_ended_total, calls_answered_total: docs/observability.md)
      if (t.changed && t.call) {
        platformMetrics.callsEnded.labels(t.call.direction, t.call.hangup_reason || 'normal').inc();
        if (t.call.tm_progressing) platformMetrics.callsAnswered.labels(t.call.direction).inc();
      }
      return t;
    },
    async setMute(id: string, direction: MuteDirection): Promise<CallRow | null> {
      const [row] = await table().where({ id }).update({ mute_direction: direction, tm_update: clock.now() }).returning('*');
      return (row as CallRow | undefined) ?? null;
    },
    async addChained(masterId: string, chainedId: string): Promise<void> {
      // once only, so a write retried after an unseen commit appends nothing twice
      await table()
        .where({ id: masterId })
        .whereRaw('not (? = any(chained_call_ids))', [chainedId])
        .update({ chained_call_ids: db.raw('array_append(chained_call_ids, ?)', [chainedId]), tm_update: clock.now() });
    },
    async setRecording(id: string, recordingId: string, active: boolean): Promise<CallRow | null> {
      const update: Record<string, unknown> = { recording_id: active ? recordingId : EMPTY_UUID, tm_update: clock.now() };
      if (active) update.recording_ids = db.raw('array_append(recording_ids, ?)', [recordingId]);
      const [row] = await table().where({ id }).update(update).returning('*');
      return (row as CallRow | undefined) ?? null;
    },
    /** The node that holds the call (a row POST /calls wrote has none until a node takes it). */
    async setNode(id: string, nodeId: string): Promise<void> {
      await table().where({ id }).update({ node_id: nodeId });
    },
    /** The source a leg went out with, when the caller-id rule replaced it (core/calls/caller-id). */
    async setSource(id: string, source: Address): Promise<void> {
      await table()
        .where({ id })
        .update({ source: JSON.stringify(source), tm_update: clock.now() });
    },
    async setActiveflow(id: string, activeflowId: string, flowId: string): Promise<void> {
      await table().where({ id }).update({ activeflow_id: activeflowId, flow_id: flowId, tm_update: clock.now() });
    },
    /** Live calls of a customer (concurrency caps for toll-fraud protection). */
    async countLive(customerId: string): Promise<number> {
      const r = (await table().where({ customer_id: customerId }).whereNot({ status: 'hangup' }).count<{ count: number }[]>('id as count')) as { count: number | string }[];
      return Number(r[0]?.count ?? 0);
    },
    /** The activeflow of a customer's call, deleted or not; null for no such call. */
    async activeflowOf(customerId: string, id: string): Promise<string | null> {
      const row = (await db('calls').where({ id, customer_id: customerId }).first('activeflow_id')) as { activeflow_id: string } | undefined;
      return row ? row.activeflow_id : null;
    },
    /** A customer's live call with its master and chained legs (the ladder's). */
    async legsOf(customerId: string, id: string): Promise<Pick<CallRow, 'id' | 'master_call_id' | 'chained_call_ids'> | undefined> {
      return (await db('calls').where({ id, customer_id: customerId }).whereNull('tm_delete').first('id', 'master_call_id', 'chained_call_ids')) as
        Pick<CallRow, 'id' | 'master_call_id' | 'chained_call_ids'> | undefined;
    },
    /** Those of `ids` that are the customer's calls (deleted or not). */
    async idsOwnedAmong(customerId: string, ids: string[]): Promise<string[]> {
      return ((await db('calls').whereIn('id', ids).where({ customer_id: customerId }).select('id')) as { id: string }[]).map((r) => r.id);
    },
    /** Soft-deletes the call unless it already is; the row, or null. */
    async softDelete(id: string, now: Date): Promise<CallRow | null> {
      const [row] = (await db('calls').where({ id }).whereNull('tm_delete').update({ tm_delete: now, tm_update: now }).returning('*')) as CallRow[];
      return row ?? null;
    },
    /** Removes a row nothing has seen (a dial undone inside the transaction that wrote it). */
    async remove(id: string): Promise<void> {
      await db('calls').where({ id }).delete();
    },
    /** Writes the call's quality summary (media-app, at the end of its media). */
    async setQuality(id: string, quality: CallQuality): Promise<void> {
      await db('calls')
        .where({ id })
        .update({ quality: JSON.stringify(quality), tm_update: clock.now() });
    },
    /** Merges `patch` into the call's metadata; the row, or null. */
    async mergeMetadata(id: string, patch: Record<string, unknown>): Promise<CallRow | null> {
      const [row] = (await db('calls')
        .where({ id })
        .update({ metadata: db.raw(`metadata || ?::jsonb`, [JSON.stringify(patch)]), tm_update: clock.now() })
        .returning('*')) as CallRow[];
      return row ?? null;
    },
    /** Ids of the live legs whose master is `masterId`. */
    async liveLegIds(masterId: string): Promise<string[]> {
      return ((await db('calls').where({ master_call_id: masterId }).whereNot({ status: 'hangup' }).select('id')) as { id: string }[]).map((r) => r.id);
    },
    /** Of `ids`, the answered outgoing PSTN calls the dial policy admitted (the credit guard's). */
    async answeredPstnAmong(ids: string[]): Promise<AnsweredCall[]> {
      return (await answeredPstn(db('calls').whereIn('id', ids)).select('id', 'customer_id', 'tm_progressing')) as AnsweredCall[];
    },
    /** A customer's answered outgoing PSTN calls the dial policy admitted, on every node. */
    async answeredPstnOf(customerId: string): Promise<Omit<AnsweredCall, 'customer_id'>[]> {
      return (await answeredPstn(db('calls').where({ customer_id: customerId })).select('id', 'tm_progressing')) as Omit<AnsweredCall, 'customer_id'>[];
    },
    /** Merges `patch` into the call's data (tm_update unchanged). */
    async mergeData(id: string, patch: Record<string, unknown>): Promise<void> {
      await db('calls')
        .where({ id })
        .update({ data: db.raw('data || ?::jsonb', [JSON.stringify(patch)]) });
    },
    /** The calls of `ids` that exist (deleted or not, any customer's: the caller holds ids it owns). */
    async byIds(ids: string[]): Promise<CallRow[]> {
      if (ids.length === 0) return [];
      return (await db('calls').whereIn('id', ids)) as CallRow[];
    },
    /** Says in the call's data that it is ended because the balance ran out. */
    async markBalanceExhausted(id: string): Promise<void> {
      await db('calls')
        .where({ id })
        .update({ data: db.raw(`data || '{"balance_exhausted": true}'::jsonb`) });
    },
  };
}

/** An answered call: answered at tm_progressing. */
export interface AnsweredCall {
  id: string;
  customer_id: string;
  tm_progressing: Date;
}

/** Answered (progressing since tm_progressing) outgoing calls the dial policy admitted to the PSTN. */
function answeredPstn(q: Knex.QueryBuilder): Knex.QueryBuilder {
  return q.where({ status: 'progressing', direction: 'outgoing' }).whereNotNull('tm_progressing').whereRaw(`(data->>'pstn_admitted') = 'true'`);
}
