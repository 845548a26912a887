import type { Knex } from 'knex';

/**
 * The agent workspace: contact cases and their notes, webchat widgets with their visitor sessions
 * and messages, and agent chats (talks) with participants and messages.
 */
const tm = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 }).nullable();
const created = (t: Knex.CreateTableBuilder) => t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
const customer = (t: Knex.CreateTableBuilder) => t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');

export async function up(knex: Knex): Promise<void> {
  await contactCases(knex);
  await webchat(knex);
  await talks(knex);
}

/** Contact cases and the notes agents write on them. */
async function contactCases(knex: Knex): Promise<void> {
  await knex.schema.createTable('contact_cases', (t) => {
    t.uuid('id').primary();
    customer(t);
    t.jsonb('peer').notNullable().defaultTo('{}');
    t.jsonb('local').notNullable().defaultTo('{}');
    t.text('reference_type').notNullable().defaultTo('');
    t.uuid('reference_id').notNullable();
    t.uuid('activeflow_id').notNullable();
    t.uuid('contact_id').nullable();
    t.text('owner_type').notNullable().defaultTo('');
    t.uuid('owner_id').notNullable();
    t.text('status').notNullable();
    tm(t, 'opened_at');
    tm(t, 'closed_at');
    t.text('closed_reason').notNullable().defaultTo('');
    t.text('closed_by_type').notNullable().defaultTo('');
    t.uuid('closed_by_id').nullable();
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.uuid('previous_case_id').nullable();
    created(t);
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
    t.index(['owner_id']);
  });
  await knex.raw(`ALTER TABLE contact_cases ADD CONSTRAINT contact_cases_status_check CHECK (status IN ('open','closed'))`);

  await knex.schema.createTable('contact_case_notes', (t) => {
    t.uuid('id').primary();
    customer(t);
    t.uuid('case_id').notNullable().references('id').inTable('contact_cases').onDelete('CASCADE');
    t.text('author_type').notNullable();
    t.uuid('author_id').nullable();
    t.text('text').notNullable();
    created(t);
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['case_id', 'tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE contact_case_notes ADD CONSTRAINT contact_case_notes_author_check CHECK (author_type IN ('agent','system'))`);
}

/** Webchat widgets, their visitor sessions and the sessions' messages. */
async function webchat(knex: Knex): Promise<void> {
  await knex.schema.createTable('webchat_widgets', (t) => {
    t.uuid('id').primary();
    customer(t);
    t.text('name').notNullable().defaultTo('');
    t.text('status').notNullable().defaultTo('active');
    t.uuid('session_flow_id').notNullable();
    t.uuid('message_flow_id').notNullable();
    t.integer('session_idle_timeout').notNullable().defaultTo(0);
    t.jsonb('theme_config').notNullable().defaultTo('{}');
    t.text('direct_hash').notNullable();
    created(t);
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`CREATE UNIQUE INDEX webchat_widgets_direct_hash_uq ON webchat_widgets (direct_hash)`);

  await knex.schema.createTable('webchat_sessions', (t) => {
    t.uuid('id').primary();
    customer(t);
    t.uuid('widget_id').notNullable().references('id').inTable('webchat_widgets').onDelete('CASCADE');
    // The conversation the session is threaded into (agents answer it there).
    t.uuid('conversation_id').notNullable();
    t.uuid('activeflow_id').notNullable();
    t.text('status').notNullable();
    t.text('page_url').notNullable().defaultTo('');
    t.text('referrer').notNullable().defaultTo('');
    tm(t, 'tm_last_activity');
    created(t);
    tm(t, 'tm_update');
    tm(t, 'tm_end');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
    t.index(['conversation_id']);
  });
  await knex.raw(`ALTER TABLE webchat_sessions ADD CONSTRAINT webchat_sessions_status_check CHECK (status IN ('active','ended'))`);

  await knex.schema.createTable('webchat_messages', (t) => {
    t.uuid('id').primary();
    customer(t);
    t.uuid('widget_id').notNullable();
    t.uuid('session_id').notNullable().references('id').inTable('webchat_sessions').onDelete('CASCADE');
    t.text('direction').notNullable();
    t.text('status').notNullable();
    t.text('sender_id').notNullable().defaultTo('');
    t.text('text').notNullable();
    created(t);
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
    t.index(['session_id', 'tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE webchat_messages ADD CONSTRAINT webchat_messages_direction_check CHECK (direction IN ('inbound','outbound'))`);
}

/** Agent chats (talks): the chat, its participants and its messages. */
async function talks(knex: Knex): Promise<void> {
  await knex.schema.createTable('talk_chats', (t) => {
    t.uuid('id').primary();
    customer(t);
    t.text('type').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    created(t);
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE talk_chats ADD CONSTRAINT talk_chats_type_check CHECK (type IN ('direct','group','talk'))`);

  await knex.schema.createTable('talk_participants', (t) => {
    t.uuid('id').primary();
    customer(t);
    t.uuid('chat_id').notNullable().references('id').inTable('talk_chats').onDelete('CASCADE');
    t.text('owner_type').notNullable();
    t.uuid('owner_id').notNullable();
    t.timestamp('tm_joined', { useTz: true, precision: 6 }).notNullable();
    t.unique(['chat_id', 'owner_type', 'owner_id']);
    t.index(['owner_id']);
  });

  await knex.schema.createTable('talk_messages', (t) => {
    t.uuid('id').primary();
    customer(t);
    t.uuid('chat_id').notNullable().references('id').inTable('talk_chats').onDelete('CASCADE');
    t.text('owner_type').notNullable();
    t.uuid('owner_id').notNullable();
    t.uuid('parent_id').notNullable();
    t.text('type').notNullable();
    t.text('text').notNullable().defaultTo('');
    t.jsonb('medias').notNullable().defaultTo('[]');
    t.jsonb('metadata').notNullable().defaultTo('{"reactions":[]}');
    created(t);
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['chat_id', 'tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE talk_messages ADD CONSTRAINT talk_messages_type_check CHECK (type IN ('normal','system'))`);
}

export async function down(knex: Knex): Promise<void> {
  for (const t of ['talk_messages', 'talk_participants', 'talk_chats', 'webchat_messages', 'webchat_sessions', 'webchat_widgets', 'contact_case_notes', 'contact_cases']) {
    await knex.schema.dropTableIfExists(t);
  }
}
