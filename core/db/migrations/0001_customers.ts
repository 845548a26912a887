import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('customers', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.text('email').notNullable().defaultTo('');
    t.boolean('email_verified').notNullable().defaultTo(false);
    t.text('phone_number').notNullable().defaultTo('');
    t.text('address').notNullable().defaultTo('');
    t.text('webhook_method').notNullable().defaultTo('');
    t.text('webhook_uri').notNullable().defaultTo('');
    t.text('webhook_secret').notNullable().defaultTo('');
    t.uuid('billing_account_id').notNullable().defaultTo('00000000-0000-0000-0000-000000000000');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.text('status').notNullable().defaultTo('initial');
    t.text('identity_verification_status').notNullable().defaultTo('none');
    t.text('terms_agreed_version').notNullable().defaultTo('');
    t.text('terms_agreed_ip').notNullable().defaultTo('');
    t.timestamp('tm_deletion_scheduled', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
    t.index(['tm_create', 'id']);
    t.index(['status']);
  });
  await knex.raw(`ALTER TABLE customers ADD CONSTRAINT customers_status_check
    CHECK (status IN ('initial','active','frozen','expired','deleted'))`);
  await knex.raw(`ALTER TABLE customers ADD CONSTRAINT customers_webhook_method_check
    CHECK (webhook_method IN ('','POST','GET','PUT','DELETE'))`);
  await knex.raw(`ALTER TABLE customers ADD CONSTRAINT customers_identity_check
    CHECK (identity_verification_status IN ('none','pending','verified','rejected'))`);
  // Email is unique among customers that are not deleted (case-insensitive).
  await knex.raw(`CREATE UNIQUE INDEX customers_email_live_uq ON customers (lower(email))
    WHERE tm_delete IS NULL AND email <> ''`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('customers');
}
