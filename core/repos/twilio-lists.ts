/**
 * What the Twilio-compatible API lists (control-api/twilio/, docs/twilio.md): a customer's calls,
 * conferences, numbers, queues and recordings, newest first, with Twilio's filters and its paging
 * (an offset and a limit: the caller asks for one row more than a page to know whether another
 * follows). Every list is the customer's and leaves soft-deleted rows out.
 */
import type { Db, Knex } from '../db/knex';
import type { TwilioCallStatus, TwilioConferenceStatus } from '../twilio/statuses';
import type { CallRow } from './calls';
import type { ConferenceRow } from './conferences';
import type { NumberRow } from './numbers';
import type { QueueRow } from './queues';
import type { RecordingRow } from './recordings';

/** A window of a list. */
export interface TwilioWindow {
  offset: number;
  limit: number;
}

/** A UTC-day filter: `=` that day, `<` before it, `>` on or after it (as Twilio). */
export interface DayFilter {
  op: '=' | '<' | '>';
  day: Date;
}

const DAY = 86_400_000;

function whereDays(q: Knex.QueryBuilder, col: string, filters: readonly DayFilter[]): Knex.QueryBuilder {
  for (const f of filters) {
    if (f.op === '=') q = q.where(col, '>=', f.day).where(col, '<', new Date(f.day.getTime() + DAY));
    else if (f.op === '<') q = q.where(col, '<', f.day);
    else q = q.where(col, '>=', f.day);
  }
  return q;
}

const newestFirst = (q: Knex.QueryBuilder, w: TwilioWindow) => q.orderBy('tm_create', 'desc').orderBy('id', 'desc').offset(w.offset).limit(w.limit);

const FAILED = ['failed', 'dialout'];

/** The SQL condition (on table `calls`) for rows in one Twilio status: the inverse of control-api's twilioStatus. */
function whereTwilioStatus(q: Knex.QueryBuilder, s: TwilioCallStatus): Knex.QueryBuilder {
  const unanswered = "tm_progressing is null and hangup_reason not in ('busy', 'noanswer', 'timeout', 'cancel', 'failed', 'dialout')";
  switch (s) {
    case 'queued':
      return q.where('status', 'dialing');
    case 'ringing':
      return q.whereIn('status', ['ringing', 'canceling']);
    case 'in-progress':
      return q.whereIn('status', ['progressing', 'terminating']);
    case 'busy':
      return q.where({ status: 'hangup', hangup_reason: 'busy' });
    case 'no-answer':
      return q.where('status', 'hangup').whereIn('hangup_reason', ['noanswer', 'timeout']);
    case 'failed':
      return q.where('status', 'hangup').whereRaw(`(hangup_reason in ('failed', 'dialout') or (${unanswered} and hangup_by <> 'local'))`);
    case 'canceled':
      return q.where('status', 'hangup').whereRaw(`(hangup_reason = 'cancel' or (${unanswered} and hangup_by = 'local'))`);
    case 'completed':
      return q
        .where('status', 'hangup')
        .whereNotNull('tm_progressing')
        .whereNotIn('hangup_reason', ['busy', 'noanswer', 'timeout', 'cancel', ...FAILED]);
  }
}

export interface TwilioCallFilter {
  /** the destination's target */
  to?: string;
  /** the source's target */
  from?: string;
  status?: TwilioCallStatus;
  /** the master call's id */
  parentId?: string;
  /** on tm_create */
  started?: readonly DayFilter[];
  /** on tm_hangup */
  ended?: readonly DayFilter[];
}

export interface TwilioConferenceFilter {
  name?: string;
  status?: TwilioConferenceStatus;
  /** on tm_create */
  created?: readonly DayFilter[];
  /** on tm_update */
  updated?: readonly DayFilter[];
}

export function twilioListsRepo(db: Db) {
  return {
    async calls(customerId: string, f: TwilioCallFilter, w: TwilioWindow): Promise<CallRow[]> {
      let q = db('calls').whereNull('tm_delete').where('customer_id', customerId);
      if (f.to !== undefined) q = q.whereRaw(`destination->>'target' = ?`, [f.to]);
      if (f.from !== undefined) q = q.whereRaw(`source->>'target' = ?`, [f.from]);
      if (f.status) q = whereTwilioStatus(q, f.status);
      if (f.parentId !== undefined) q = q.where('master_call_id', f.parentId);
      q = whereDays(q, 'tm_create', f.started ?? []);
      q = whereDays(q, 'tm_hangup', f.ended ?? []);
      return (await newestFirst(q, w)) as CallRow[];
    },
    /** Conferences of type conference or connect (the queue subsystem's own rooms are not Twilio's). */
    async conferences(customerId: string, f: TwilioConferenceFilter, w: TwilioWindow): Promise<ConferenceRow[]> {
      let q = db('conferences').whereNull('tm_delete').where('customer_id', customerId).whereIn('type', ['conference', 'connect']);
      if (f.name !== undefined) q = q.where('name', f.name);
      if (f.status === 'completed') q = q.whereIn('status', ['terminating', 'terminated']);
      if (f.status === 'in-progress') q = q.where('status', 'progressing').whereRaw('cardinality(conferencecall_ids) > 0');
      if (f.status === 'init') q = q.whereRaw(`(status = 'starting' or (status = 'progressing' and cardinality(conferencecall_ids) = 0))`);
      q = whereDays(q, 'tm_create', f.created ?? []);
      q = whereDays(q, 'tm_update', f.updated ?? []);
      return (await newestFirst(q, w)) as ConferenceRow[];
    },
    /** `numberContains`: a part of the number (LIKE's wildcards and escape are dropped from it); `name`: the exact name. */
    async numbers(customerId: string, f: { numberContains?: string; name?: string }, w: TwilioWindow): Promise<NumberRow[]> {
      let q = db('numbers').whereNull('tm_delete').where('customer_id', customerId);
      if (f.numberContains) q = q.where('number', 'like', `%${f.numberContains.replace(/[%_\\]/g, '')}%`);
      if (f.name) q = q.where('name', f.name);
      return (await newestFirst(q, w)) as NumberRow[];
    },
    async queues(customerId: string, w: TwilioWindow): Promise<QueueRow[]> {
      return (await newestFirst(db('queues').whereNull('tm_delete').where('customer_id', customerId), w)) as QueueRow[];
    },
    /** `callId` / `conferenceId`: only the recordings of that call / conference. */
    async recordings(customerId: string, f: { callId?: string; conferenceId?: string; created?: readonly DayFilter[] }, w: TwilioWindow): Promise<RecordingRow[]> {
      let q = db('recordings').whereNull('tm_delete').where('customer_id', customerId);
      if (f.callId !== undefined) q = q.where({ reference_type: 'call', reference_id: f.callId });
      if (f.conferenceId !== undefined) q = q.where({ reference_type: 'conference', reference_id: f.conferenceId });
      q = whereDays(q, 'tm_create', f.created ?? []);
      return (await newestFirst(q, w)) as RecordingRow[];
    },
  };
}
