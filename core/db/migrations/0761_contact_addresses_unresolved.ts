import type { Knex } from 'knex';

/**
 * Unresolved contact addresses and peer events.
 *
 * - contact_addresses.contact_id becomes nullable: an address with no contact is "unresolved" (the
 *   customer's pool that /contact_addresses lists with unresolved=true), and `claim` attaches it to
 *   a contact. Contacts' own reads only ever select by contact_id, so they never see the pool.
 * - peer_events: the stored events of calls, conversations and conversation messages projected onto
 *   (publisher, direction, peer, local), the raw shape /contact_interactions and /contact_peer_events
 *   answer with. A view, so it is always exactly what the events store holds.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE contact_addresses ALTER COLUMN contact_id DROP NOT NULL');
  await knex.raw(`CREATE INDEX contact_addresses_unresolved ON contact_addresses (customer_id, tm_create, seq) WHERE contact_id IS NULL`);
  await knex.raw(`
    CREATE VIEW peer_events AS
    SELECT e.id, e.seq, e.customer_id, e."timestamp", e.event_type, e.data,
      p.publisher,
      coalesce(e.data->>'id', e.resource_id::text) AS reference_id,
      CASE WHEN p.publisher = 'conversation' THEN '' ELSE coalesce(e.data->>'direction', '') END AS direction,
      CASE WHEN p.publisher = 'conversation' THEN coalesce(e.data->'peer', '{}'::jsonb)
           WHEN e.data->>'direction' = 'outgoing' THEN coalesce(e.data->'destination', '{}'::jsonb)
           ELSE coalesce(e.data->'source', '{}'::jsonb) END AS peer,
      CASE WHEN p.publisher = 'conversation' THEN coalesce(e.data->'self', '{}'::jsonb)
           WHEN e.data->>'direction' = 'outgoing' THEN coalesce(e.data->'source', '{}'::jsonb)
           ELSE coalesce(e.data->'destination', '{}'::jsonb) END AS local
    FROM events e
    CROSS JOIN LATERAL (SELECT CASE
      WHEN e.event_type LIKE 'conversation\\_message\\_%' THEN 'conversation_message'
      WHEN e.event_type LIKE 'conversation\\_%' THEN 'conversation'
      ELSE 'call' END AS publisher) p
    WHERE e.resource IN ('call', 'conversation')
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP VIEW IF EXISTS peer_events');
  await knex.raw('DROP INDEX IF EXISTS contact_addresses_unresolved');
  await knex.raw('DELETE FROM contact_addresses WHERE contact_id IS NULL');
  await knex.raw('ALTER TABLE contact_addresses ALTER COLUMN contact_id SET NOT NULL');
}
