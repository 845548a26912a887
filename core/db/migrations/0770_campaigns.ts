import type { Knex } from 'knex';

/**
 * The dialer: outplans (how to dial), outdials and their targets (whom), campaigns (the run) and
 * campaigncalls (one per dial attempt). Addresses are jsonb like calls'; a missing destination is
 * SQL null. `tm_next_try` is internal: a failed target is not dialled again before it (try_interval).
 */
const tm = (t: Knex.CreateTableBuilder) => {
  t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
  t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
  t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
};
const owner = (t: Knex.CreateTableBuilder) => {
  t.uuid('id').primary();
  t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
};
const EMPTY = '00000000-0000-0000-0000-000000000000';

export async function up(knex: Knex): Promise<void> {
  await outplans(knex);
  await outdials(knex);
  await campaigns(knex);
}

/** How to dial: an outplan's source, timeouts and tries per destination. */
async function outplans(knex: Knex): Promise<void> {
  await knex.schema.createTable('outplans', (t) => {
    owner(t);
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.jsonb('source').notNullable();
    t.integer('dial_timeout').notNullable();
    t.integer('try_interval').notNullable();
    for (let i = 0; i < 5; i++) t.integer(`max_try_count_${i}`).notNullable().defaultTo(0);
    tm(t);
    t.index(['customer_id', 'tm_create', 'id']);
  });
}

/** Whom to dial: outdials and their targets with up to five destinations each. */
async function outdials(knex: Knex): Promise<void> {
  await knex.schema.createTable('outdials', (t) => {
    owner(t);
    t.uuid('campaign_id').notNullable().defaultTo(EMPTY);
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.text('data').notNullable().defaultTo('');
    tm(t);
    t.index(['customer_id', 'tm_create', 'id']);
  });

  await knex.schema.createTable('outdialtargets', (t) => {
    owner(t);
    t.uuid('outdial_id').notNullable().references('id').inTable('outdials').onDelete('CASCADE');
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.text('data').notNullable().defaultTo('');
    t.text('status').notNullable().defaultTo('idle');
    for (let i = 0; i < 5; i++) t.jsonb(`destination_${i}`).nullable();
    for (let i = 0; i < 5; i++) t.integer(`try_count_${i}`).notNullable().defaultTo(0);
    t.timestamp('tm_next_try', { useTz: true, precision: 6 }).nullable();
    tm(t);
    t.index(['outdial_id', 'tm_create', 'id']);
    t.index(['outdial_id', 'status']);
  });
  await knex.raw(`ALTER TABLE outdialtargets ADD CONSTRAINT outdialtargets_status_check CHECK (status IN ('idle','progressing','done'))`);
}

/** The run: campaigns, and one campaigncall per dial attempt. */
async function campaigns(knex: Knex): Promise<void> {
  await knex.schema.createTable('campaigns', (t) => {
    owner(t);
    t.text('type').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.text('status').notNullable().defaultTo('stop');
    t.integer('service_level').notNullable();
    t.text('end_handle').notNullable().defaultTo('stop');
    t.jsonb('actions').notNullable().defaultTo('[]');
    // the non-listed flow holding `actions` (a new one on every change: calls in flight keep theirs)
    t.uuid('flow_id').notNullable().defaultTo(EMPTY);
    t.uuid('outplan_id').notNullable().defaultTo(EMPTY);
    t.uuid('outdial_id').notNullable().defaultTo(EMPTY);
    t.uuid('queue_id').notNullable().defaultTo(EMPTY);
    t.uuid('next_campaign_id').notNullable().defaultTo(EMPTY);
    tm(t);
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE campaigns ADD CONSTRAINT campaigns_status_check CHECK (status IN ('stop','stopping','run'))`);
  await knex.raw(`ALTER TABLE campaigns ADD CONSTRAINT campaigns_type_check CHECK (type IN ('call','flow'))`);
  await knex.raw(`ALTER TABLE campaigns ADD CONSTRAINT campaigns_end_handle_check CHECK (end_handle IN ('stop','continue'))`);
  // the runner scans the live ones
  await knex.raw(`CREATE INDEX campaigns_active ON campaigns (status) WHERE tm_delete IS NULL AND status <> 'stop'`);

  await knex.schema.createTable('campaigncalls', (t) => {
    owner(t);
    t.uuid('campaign_id').notNullable().references('id').inTable('campaigns').onDelete('CASCADE');
    t.uuid('outplan_id').notNullable();
    t.uuid('outdial_id').notNullable();
    t.uuid('outdial_target_id').notNullable();
    t.uuid('queue_id').notNullable().defaultTo(EMPTY);
    t.uuid('activeflow_id').notNullable().defaultTo(EMPTY);
    t.uuid('flow_id').notNullable().defaultTo(EMPTY);
    t.text('reference_type').notNullable().defaultTo('none');
    t.uuid('reference_id').notNullable().defaultTo(EMPTY);
    t.text('status').notNullable().defaultTo('dialing');
    t.text('result').notNullable().defaultTo('');
    t.jsonb('source').notNullable();
    t.jsonb('destination').notNullable();
    t.integer('destination_index').notNullable().defaultTo(0);
    t.integer('try_count').notNullable().defaultTo(0);
    tm(t);
    t.index(['customer_id', 'tm_create', 'id']);
    t.index(['campaign_id', 'tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE campaigncalls ADD CONSTRAINT campaigncalls_status_check CHECK (status IN ('dialing','progressing','done'))`);
  await knex.raw(`ALTER TABLE campaigncalls ADD CONSTRAINT campaigncalls_result_check CHECK (result IN ('','success','fail'))`);
  await knex.raw(`CREATE INDEX campaigncalls_live ON campaigncalls (campaign_id) WHERE status <> 'done'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('campaigncalls');
  await knex.schema.dropTableIfExists('campaigns');
  await knex.schema.dropTableIfExists('outdialtargets');
  await knex.schema.dropTableIfExists('outdials');
  await knex.schema.dropTableIfExists('outplans');
}
