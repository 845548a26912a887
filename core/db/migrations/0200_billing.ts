import type { Knex } from 'knex';

/** Billing accounts (one live account per customer) and the billing ledger. Money is in micros (1 USD = 1,000,000). */
export async function up(knex: Knex): Promise<void> {
  const ts = (t: Knex.CreateTableBuilder, name: string, nullable = true) => {
    const c = t.timestamp(name, { useTz: true, precision: 6 });
    return nullable ? c.nullable() : c.notNullable();
  };
  await knex.schema.createTable('billing_accounts', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.text('status').notNullable().defaultTo('active');
    t.text('plan_type').notNullable().defaultTo('free');
    t.text('plan_status').notNullable().defaultTo('active');
    t.bigInteger('balance_credit').notNullable().defaultTo(0);
    t.bigInteger('balance_token').notNullable().defaultTo(0);
    t.text('payment_type').notNullable().defaultTo('prepaid');
    t.text('payment_method').notNullable().defaultTo('');
    ts(t, 'tm_last_topup');
    ts(t, 'tm_next_topup');
    ts(t, 'tm_create', false);
    ts(t, 'tm_update');
    ts(t, 'tm_delete');
    t.index(['tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE billing_accounts ADD CONSTRAINT billing_accounts_status_check CHECK (status IN ('active','frozen','deleted'))`);
  await knex.raw(`CREATE UNIQUE INDEX billing_accounts_customer_live_uq ON billing_accounts (customer_id) WHERE tm_delete IS NULL`);

  await knex.schema.createTable('billings', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('account_id').notNullable().references('id').inTable('billing_accounts').onDelete('CASCADE');
    t.text('transaction_type').notNullable();
    t.text('status').notNullable();
    t.text('reference_type').notNullable().defaultTo('');
    t.uuid('reference_id').notNullable();
    t.text('cost_type').notNullable().defaultTo('');
    t.integer('usage_duration').notNullable().defaultTo(0);
    t.integer('billable_units').notNullable().defaultTo(0);
    t.bigInteger('rate_token_per_unit').notNullable().defaultTo(0);
    t.bigInteger('rate_credit_per_unit').notNullable().defaultTo(0);
    t.bigInteger('amount_token').notNullable().defaultTo(0);
    t.bigInteger('amount_credit').notNullable().defaultTo(0);
    t.bigInteger('balance_token_snapshot').notNullable().defaultTo(0);
    t.bigInteger('balance_credit_snapshot').notNullable().defaultTo(0);
    // Retried charges (BullMQ delivers at least once) find the row they already wrote.
    t.text('idempotency_key').notNullable().unique();
    ts(t, 'tm_billing_start');
    ts(t, 'tm_billing_end');
    ts(t, 'tm_create', false);
    ts(t, 'tm_update');
    ts(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
    t.index(['reference_id']);
  });
  await knex.raw(`ALTER TABLE billings ADD CONSTRAINT billings_transaction_type_check CHECK (transaction_type IN ('usage','top_up','adjustment','refund'))`);
  await knex.raw(`ALTER TABLE billings ADD CONSTRAINT billings_status_check CHECK (status IN ('progressing','end','pending','finished'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('billings');
  await knex.schema.dropTable('billing_accounts');
}
