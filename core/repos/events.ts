/**
 * events: the stored platform events (written by core/events/store.ts) read back newest first for
 * /timelines and /aggregated-events, a page at a time by a (timestamp, event id) cursor.
 */
import type { Db } from '../db/knex';

export interface StoredEventRow {
  id: string;
  event_type: string;
  data: Record<string, unknown>;
  /** The event's timestamp in microseconds since the epoch (the page cursor's). */
  us: number;
  timestamp: Date;
}

/** Which events: one resource's, or one activeflow run's. */
export type EventsOf = { customer_id: string; resource: string; resource_id: string } | { customer_id: string; activeflow_id: string };

export function eventsRepo(db: Db) {
  return {
    /** Up to `limit` events of `of`, newest first, older than the cursor when one is given. */
    async page(of: EventsOf, limit: number, cursor: { ts: string; id: string | null } | null): Promise<StoredEventRow[]> {
      const query = db('events').where(of).select<StoredEventRow[]>('id', 'event_type', 'data', db.raw('(extract(epoch from "timestamp") * 1000000)::bigint as us'), 'timestamp');
      if (cursor) {
        if (cursor.id) query.whereRaw('("timestamp", seq) < (?::timestamptz, coalesce((select seq from events where id = ?::uuid), 0))', [cursor.ts, cursor.id]);
        else query.where('timestamp', '<', cursor.ts);
      }
      return await query
        .orderBy([
          { column: 'timestamp', order: 'desc' },
          { column: 'seq', order: 'desc' },
        ])
        .limit(limit);
    },
  };
}
