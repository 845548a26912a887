import type { Knex } from 'knex';

/**
 * Messages (SMS) with one row per target (each target has its own delivery status and provider
 * reference), emails, conversation accounts, conversations (threads) and their messages.
 */
const tm = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 }).nullable();

export async function up(knex: Knex): Promise<void> {
  await messages(knex);
  await emails(knex);
  await conversations(knex);
}

/** SMS messages with one row per target (own delivery status and provider reference). */
async function messages(knex: Knex): Promise<void> {
  await knex.schema.createTable('messages', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('type').notNullable().defaultTo('sms');
    t.jsonb('source').notNullable();
    t.text('text').notNullable();
    t.text('direction').notNullable();
    t.text('provider').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE messages ADD CONSTRAINT messages_direction_check CHECK (direction IN ('outbound','inbound'))`);

  await knex.schema.createTable('message_targets', (t) => {
    t.uuid('id').primary();
    t.uuid('message_id').notNullable().references('id').inTable('messages').onDelete('CASCADE');
    t.integer('idx').notNullable();
    t.jsonb('destination').notNullable();
    t.text('status').notNullable();
    t.integer('parts').notNullable().defaultTo(1);
    // The provider's id of this send (Twilio MessageSid); status callbacks find the target by it.
    t.text('provider_ref').notNullable().defaultTo('');
    t.text('error').notNullable().defaultTo('');
    tm(t, 'tm_update');
    t.unique(['message_id', 'idx']);
    t.index(['provider_ref']);
  });
  await knex.raw(`ALTER TABLE message_targets ADD CONSTRAINT message_targets_status_check CHECK (status IN ('received','queued','gw_timeout','sent','dlr_timeout','failed','delivered'))`);
}

/** Emails. */
async function emails(knex: Knex): Promise<void> {
  await knex.schema.createTable('emails', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('activeflow_id').notNullable();
    t.jsonb('source').notNullable();
    t.jsonb('destinations').notNullable();
    t.text('status').notNullable();
    t.text('subject').notNullable();
    t.text('content').notNullable();
    t.jsonb('attachments').notNullable().defaultTo('[]');
    t.text('provider_ref').notNullable().defaultTo('');
    t.text('error').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });
}

/** Conversation accounts, conversations (threads) and their messages. */
async function conversations(knex: Knex): Promise<void> {
  await knex.schema.createTable('conversation_accounts', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('type').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.text('secret').notNullable().defaultTo('');
    t.text('token').notNullable().defaultTo('');
    t.jsonb('provider_data').notNullable().defaultTo('{}');
    t.uuid('message_flow_id').notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });

  await knex.schema.createTable('conversations', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('owner_type').notNullable().defaultTo('');
    t.uuid('owner_id').notNullable();
    t.uuid('account_id').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.text('type').notNullable();
    t.text('dialog_id').notNullable().defaultTo('');
    t.jsonb('self').notNullable();
    t.jsonb('peer').notNullable();
    // The thread key: one live conversation per (customer, channel, our address, their address).
    t.text('thread_key').notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`CREATE UNIQUE INDEX conversations_thread_live_uq ON conversations (customer_id, thread_key) WHERE tm_delete IS NULL`);

  await knex.schema.createTable('conversation_messages', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('conversation_id').notNullable().references('id').inTable('conversations').onDelete('CASCADE');
    t.text('direction').notNullable();
    t.text('status').notNullable();
    t.text('reference_type').notNullable().defaultTo('');
    t.uuid('reference_id').notNullable();
    t.jsonb('source').notNullable();
    t.jsonb('destination').notNullable();
    t.text('text').notNullable();
    t.jsonb('medias').notNullable().defaultTo('[]');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['conversation_id', 'tm_create', 'id']);
    t.index(['reference_id']);
  });
  await knex.raw(`ALTER TABLE conversation_messages ADD CONSTRAINT conversation_messages_direction_check CHECK (direction IN ('outgoing','incoming'))`);
  await knex.raw(`ALTER TABLE conversation_messages ADD CONSTRAINT conversation_messages_status_check CHECK (status IN ('progressing','done','failed'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('conversation_messages');
  await knex.schema.dropTable('conversations');
  await knex.schema.dropTable('conversation_accounts');
  await knex.schema.dropTable('emails');
  await knex.schema.dropTable('message_targets');
  await knex.schema.dropTable('messages');
}
