/**
 * Agent status changes: guarded updates (compare-and-set on the current status) so a queue claiming
 * an agent and a person changing their status never both win; each change is published once.
 *
 * The queue's claim takes an available agent holding every tag of the queue (random pick), moving
 * it to ringing; afterwards busy during service, available again when service ends or nobody answered.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import type { EventPublisher } from '../events/bus';
import { publishResourceEvent } from '../events/catalogue';
import { agentJson, type AgentRow, type AgentStatus } from '../repos/agents';

export async function publishAgent(publisher: EventPublisher, type: 'agent_created' | 'agent_updated' | 'agent_deleted' | 'agent_status_updated', a: AgentRow): Promise<void> {
  await publishResourceEvent(publisher, type, agentJson(a)).catch(() => undefined);
}

/** Sets the status when it is one of `from` (any when omitted); publishes agent_status_updated on change. */
export async function setAgentStatus(db: Db, publisher: EventPublisher | null, id: string, to: AgentStatus, from?: readonly AgentStatus[]): Promise<AgentRow | null> {
  const q = db('agents').where({ id }).whereNull('tm_delete').whereNot({ status: to });
  if (from) q.whereIn('status', from as AgentStatus[]);
  const [row] = (await q.update({ status: to, tm_update: clock.now() }).returning('*')) as AgentRow[];
  if (row && publisher) await publishAgent(publisher, 'agent_status_updated', row);
  return row ?? null;
}

/** Claims one available agent with every one of `tagIds` and at least one address: it becomes ringing. */
export async function claimAgent(db: Db, publisher: EventPublisher | null, customerId: string, tagIds: string[], skip: string[] = []): Promise<AgentRow | null> {
  const rows = (await db.raw(
    `UPDATE agents SET status = 'ringing', tm_update = ?
       WHERE id = (
         SELECT id FROM agents
          WHERE customer_id = ? AND status = 'available' AND tm_delete IS NULL
            AND tag_ids @> ?::jsonb AND jsonb_array_length(addresses) > 0
            AND NOT (id = ANY(?::uuid[]))
          ORDER BY random() LIMIT 1
          FOR UPDATE SKIP LOCKED)
         AND status = 'available'
     RETURNING *`,
    [clock.now(), customerId, JSON.stringify(tagIds), skip],
  )) as { rows: AgentRow[] };
  const row = rows.rows[0] ?? null;
  if (row && publisher) await publishAgent(publisher, 'agent_status_updated', row);
  return row;
}
