/** Row types of core/workspace/peer-events.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export interface PeerEventRow {
  id: string;
  customer_id: string;
  tm_create: Date; // the event's timestamp (named so for the shared cursor)
  event_type: string;
  publisher: 'call' | 'conversation' | 'conversation_message';
  reference_id: string;
  direction: string;
  peer: Record<string, unknown>;
  local: Record<string, unknown>;
  data: Record<string, unknown>;
}
