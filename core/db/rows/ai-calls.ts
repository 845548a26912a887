/** Row types of core/repos/ai-calls.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export const AICALL_STATUSES = ['initiating', 'progressing', 'pausing', 'resuming', 'terminating', 'terminated'] as const;

export type AicallStatus = (typeof AICALL_STATUSES)[number];

export interface AicallRow {
  id: string;
  customer_id: string;
  assistance_type: 'ai' | 'team';
  assistance_id: string;
  ai_engine_model: string;
  ai_tts_type: string;
  ai_tts_voice_id: string;
  ai_stt_type: string;
  ai_vad_config: Record<string, number | string>;
  ai_smart_turn_enabled: boolean;
  parameter: Record<string, unknown>;
  activeflow_id: string | null;
  reference_type: string;
  reference_id: string | null;
  confbridge_id: string | null;
  current_member_id: string | null;
  status: AicallStatus;
  stt_language: string;
  metadata: Record<string, unknown>;
  tm_end: Date | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

export interface AimessageRow {
  id: string;
  customer_id: string;
  aicall_id: string;
  activeflow_id: string | null;
  active_ai_id: string | null;
  role: string;
  content: string;
  direction: '' | 'incoming' | 'outgoing';
  tool_calls: unknown[];
  tool_call_id: string;
  /** an assistant message of a voice session: `latency`, its turn's breakdown (docs/ai.md "Turn-taking") */
  metadata: Record<string, unknown>;
  tm_create: Date;
  tm_delete: Date | null;
}
