import type { Knex } from 'knex';

/**
 * Issue 56: agent versions. `ai_versions` keeps every configuration an AI had: one immutable row per
 * create and per update that changed something (number 1, 2, 3... per AI), the full configuration
 * (`config`, with the vendor keys apart in `engine_key` and `parameter`, sealed as in `ais`, so the
 * re-encryption command reaches them), the names of the fields that changed, and who changed them.
 * Every AI that exists gets its version 1 here (its configuration now, by `system`).
 * `eval_runs` learns to run versions side by side (`ai_id`, `versions`) and to be compared with an
 * earlier run (`baseline_run_id`); `eval_call_pins` says which version a simulated call's ai_talk runs
 * (by the SIP Call-ID its caller sent), written by the evals worker before it dials.
 */
const CONFIG = [
  'name',
  'detail',
  'type',
  'engine_model',
  'engine_url',
  'rag_id',
  'init_prompt',
  'tts_type',
  'tts_voice_id',
  'stt_type',
  'stt_language',
  'vad_config',
  'smart_turn_enabled',
  'auto_aicall_audit_enabled',
  'tool_names',
];
/** Every field, in the order a version 1 written by the repository lists them (core/db/rows/ais.ts AI_VERSIONED_FIELDS). */
const ALL = [...CONFIG.slice(0, 5), 'engine_key', 'parameter', ...CONFIG.slice(5)];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ai_versions', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('ai_id').notNullable().references('id').inTable('ais').onDelete('CASCADE');
    t.integer('number').notNullable();
    t.jsonb('config').notNullable();
    t.text('engine_key').notNullable().defaultTo('');
    t.jsonb('parameter').notNullable().defaultTo('{}');
    t.jsonb('changed').notNullable().defaultTo('[]');
    t.text('creator_type').notNullable();
    t.uuid('creator_id').nullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.unique(['ai_id', 'number']);
    t.index(['customer_id', 'ai_id']);
  });
  const config = CONFIG.map((c) => `'${c}', ${c}`).join(', ');
  await knex.raw(
    `INSERT INTO ai_versions (id, customer_id, ai_id, number, config, engine_key, parameter, changed, creator_type, tm_create)
     SELECT gen_random_uuid(), customer_id, id, 1, jsonb_build_object(${config}), coalesce(engine_key, ''), coalesce(parameter, '{}'::jsonb),
            to_jsonb(ARRAY[${ALL.map((c) => `'${c}'`).join(', ')}]), 'system', coalesce(tm_update, tm_create)
     FROM ais`,
  );
  await knex.schema.alterTable('eval_runs', (t) => {
    t.uuid('ai_id').nullable();
    t.jsonb('versions').notNullable().defaultTo('[]');
    t.uuid('baseline_run_id').nullable();
  });
  await knex.schema.createTable('eval_call_pins', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('run_id').notNullable().references('id').inTable('eval_runs').onDelete('CASCADE');
    t.text('sip_call_id').notNullable();
    t.uuid('ai_id').notNullable();
    t.integer('ai_version').notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_used', { useTz: true, precision: 6 }).nullable();
    t.unique(['customer_id', 'sip_call_id']);
    t.index(['run_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('eval_call_pins');
  await knex.schema.alterTable('eval_runs', (t) => {
    t.dropColumn('ai_id');
    t.dropColumn('versions');
    t.dropColumn('baseline_run_id');
  });
  await knex.schema.dropTable('ai_versions');
}
