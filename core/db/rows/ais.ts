/** Row types of core/repos/ais.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export interface AiRow {
  id: string;
  customer_id: string;
  name: string;
  detail: string;
  type: string;
  /** The customer's active Insight AI (at most one; migration 0870). */
  is_insight_active: boolean;
  engine_model: string;
  engine_url: string;
  engine_key: string;
  parameter: Record<string, unknown>;
  rag_id: string | null;
  init_prompt: string;
  current_prompt_history_id: string | null;
  tts_type: string;
  tts_voice_id: string;
  stt_type: string;
  stt_language: string;
  vad_config: Record<string, number | string>;
  smart_turn_enabled: boolean;
  auto_aicall_audit_enabled: boolean;
  tool_names: string[];
  direct_hash: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

export interface PromptHistoryRow {
  id: string;
  customer_id: string;
  ai_id: string;
  prompt: string;
  proposal_id: string;
  tm_create: Date;
}

/** The fields of an AI that make its configuration: what a version keeps (migration 0972). */
export const AI_VERSIONED_FIELDS = [
  'name',
  'detail',
  'type',
  'engine_model',
  'engine_url',
  'engine_key',
  'parameter',
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
] as const satisfies readonly (keyof AiRow)[];
export type AiVersionedField = (typeof AI_VERSIONED_FIELDS)[number];

/** Who made a version: an access key, an agent (or a delegate's agent), or the platform itself. */
export type AiVersionCreator = { type: 'accesskey' | 'agent' | 'delegate' | 'direct'; id: string } | { type: 'system'; id: null };

/** One immutable version of an AI's configuration (ai_versions). The vendor keys are apart, sealed as in `ais`. */
export interface AiVersionRow {
  id: string;
  customer_id: string;
  ai_id: string;
  number: number;
  config: Omit<Pick<AiRow, AiVersionedField>, 'engine_key' | 'parameter'>;
  engine_key: string;
  parameter: Record<string, unknown>;
  changed: AiVersionedField[];
  /** the key paths (engine_key, parameter.tts_key…) blanked since: superseded, or the AI deleted (core/secrets/version-keys.ts) */
  keys_withheld: string[];
  creator_type: AiVersionCreator['type'];
  creator_id: string | null;
  tm_create: Date;
}
