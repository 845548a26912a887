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
