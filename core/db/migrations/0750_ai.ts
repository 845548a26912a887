import type { Knex } from 'knex';

/**
 * AI: configurations and their prompt histories and proposals, teams, AI calls and their messages,
 * summaries, and RAG knowledge bases (sources and chunks, with full-text search by default).
 */
const tm = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 }).nullable();
const owned = (t: Knex.CreateTableBuilder) => {
  t.uuid('id').primary();
  t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
};
const times = (t: Knex.CreateTableBuilder, soft = true) => {
  t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
  tm(t, 'tm_update');
  if (soft) tm(t, 'tm_delete');
  t.index(['customer_id', 'tm_create', 'id']);
};

export async function up(knex: Knex): Promise<void> {
  await knowledgeBases(knex);
  await assistants(knex);
  await aiCalls(knex);
}

/** RAG knowledge bases: the base, its sources and their chunks (full-text searchable). */
async function knowledgeBases(knex: Knex): Promise<void> {
  await knex.schema.createTable('rags', (t) => {
    owned(t);
    t.text('name').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.text('status').notNullable().defaultTo('processing');
    times(t, false);
  });
  await knex.schema.createTable('rag_sources', (t) => {
    owned(t);
    t.uuid('rag_id').notNullable().references('id').inTable('rags').onDelete('CASCADE');
    t.uuid('storage_file_id').nullable();
    t.text('source_url').nullable();
    t.text('status').notNullable().defaultTo('pending');
    t.text('status_message').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    t.index(['rag_id']);
  });
  await knex.raw('CREATE UNIQUE INDEX rag_sources_file_uq ON rag_sources (rag_id, storage_file_id) WHERE storage_file_id IS NOT NULL');
  await knex.raw('CREATE UNIQUE INDEX rag_sources_url_uq ON rag_sources (rag_id, source_url) WHERE source_url IS NOT NULL');
  await knex.schema.createTable('rag_chunks', (t) => {
    t.uuid('id').primary();
    t.uuid('rag_id').notNullable().references('id').inTable('rags').onDelete('CASCADE');
    t.uuid('source_id').notNullable().references('id').inTable('rag_sources').onDelete('CASCADE');
    t.integer('seq').notNullable();
    t.text('content').notNullable();
    // embeddings from the provider when one is configured (cosine similarity in the app)
    t.jsonb('embedding').nullable();
    t.index(['rag_id']);
  });
  await knex.raw(`ALTER TABLE rag_chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED`);
  await knex.raw('CREATE INDEX rag_chunks_tsv_idx ON rag_chunks USING GIN (tsv)');
}

/** AI configurations with their prompt histories and proposals, and teams of them. */
async function assistants(knex: Knex): Promise<void> {
  await knex.schema.createTable('ais', (t) => {
    owned(t);
    t.text('name').notNullable();
    t.text('detail').notNullable().defaultTo('');
    t.text('type').notNullable().defaultTo('normal');
    t.text('engine_model').notNullable().defaultTo('');
    t.text('engine_url').notNullable().defaultTo('');
    t.text('engine_key').notNullable().defaultTo('');
    t.jsonb('parameter').notNullable().defaultTo('{}');
    t.uuid('rag_id').nullable();
    t.text('init_prompt').notNullable().defaultTo('');
    t.uuid('current_prompt_history_id').nullable();
    t.text('tts_type').notNullable().defaultTo('');
    t.text('tts_voice_id').notNullable().defaultTo('');
    t.text('stt_type').notNullable().defaultTo('');
    t.text('stt_language').notNullable().defaultTo('');
    t.jsonb('vad_config').notNullable().defaultTo('{}');
    t.boolean('smart_turn_enabled').notNullable().defaultTo(false);
    t.boolean('auto_aicall_audit_enabled').notNullable().defaultTo(false);
    t.jsonb('tool_names').notNullable().defaultTo('[]');
    t.text('direct_hash').notNullable().defaultTo('');
    times(t);
  });
  await knex.schema.createTable('ai_prompt_histories', (t) => {
    owned(t);
    t.uuid('ai_id').notNullable().references('id').inTable('ais').onDelete('CASCADE');
    t.text('prompt').notNullable();
    t.uuid('proposal_id').notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.index(['ai_id', 'tm_create', 'id']);
  });
  await knex.schema.createTable('ai_prompt_proposals', (t) => {
    owned(t);
    t.uuid('ai_id').notNullable().references('id').inTable('ais').onDelete('CASCADE');
    t.jsonb('audit_ids').notNullable().defaultTo('[]');
    t.uuid('basis_prompt_history_id').nullable();
    t.text('original_prompt').notNullable().defaultTo('');
    t.text('proposed_prompt').notNullable().defaultTo('');
    t.text('rationale').notNullable().defaultTo('');
    t.text('status').notNullable();
    t.text('error').notNullable().defaultTo('');
    t.uuid('applied_prompt_history_id').nullable();
    times(t);
  });
  await knex.schema.createTable('teams', (t) => {
    owned(t);
    t.text('name').notNullable();
    t.text('detail').notNullable().defaultTo('');
    t.uuid('start_member_id').notNullable();
    t.jsonb('members').notNullable().defaultTo('[]');
    t.jsonb('parameter').notNullable().defaultTo('{}');
    t.text('direct_hash').notNullable().defaultTo('');
    times(t);
  });
}

/** AI calls, their messages, and the summaries made of calls. */
async function aiCalls(knex: Knex): Promise<void> {
  await knex.schema.createTable('aicalls', (t) => {
    owned(t);
    t.text('assistance_type').notNullable();
    t.uuid('assistance_id').notNullable();
    t.text('ai_engine_model').notNullable().defaultTo('');
    t.text('ai_tts_type').notNullable().defaultTo('');
    t.text('ai_tts_voice_id').notNullable().defaultTo('');
    t.text('ai_stt_type').notNullable().defaultTo('');
    t.jsonb('ai_vad_config').notNullable().defaultTo('{}');
    t.boolean('ai_smart_turn_enabled').notNullable().defaultTo(false);
    t.jsonb('parameter').notNullable().defaultTo('{}');
    t.uuid('activeflow_id').nullable();
    t.text('reference_type').notNullable().defaultTo('');
    t.uuid('reference_id').nullable();
    t.uuid('confbridge_id').nullable();
    t.uuid('current_member_id').nullable();
    t.text('status').notNullable();
    t.text('stt_language').notNullable().defaultTo('');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    tm(t, 'tm_end');
    times(t);
  });
  await knex.schema.createTable('aimessages', (t) => {
    owned(t);
    t.uuid('aicall_id').notNullable().references('id').inTable('aicalls').onDelete('CASCADE');
    t.uuid('activeflow_id').nullable();
    t.uuid('active_ai_id').nullable();
    t.text('role').notNullable();
    t.text('content').notNullable().defaultTo('');
    t.text('direction').notNullable().defaultTo('');
    t.jsonb('tool_calls').notNullable().defaultTo('[]');
    t.text('tool_call_id').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_delete');
    t.index(['aicall_id', 'tm_create', 'id']);
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.schema.createTable('summaries', (t) => {
    owned(t);
    t.uuid('activeflow_id').nullable();
    t.uuid('on_end_flow_id').nullable();
    t.text('reference_type').notNullable();
    t.uuid('reference_id').notNullable();
    t.text('status').notNullable();
    t.text('language').notNullable().defaultTo('');
    t.text('content').notNullable().defaultTo('');
    t.text('status_message').notNullable().defaultTo('');
    times(t);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const t of ['summaries', 'aimessages', 'aicalls', 'teams', 'ai_prompt_proposals', 'ai_prompt_histories', 'ais', 'rag_chunks', 'rag_sources', 'rags']) {
    await knex.schema.dropTableIfExists(t);
  }
}
