/** Row types of core/repos/ai-audits.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export type AiAuditStatus = 'progressing' | 'completed' | 'failed';

export interface AiAuditRow {
  id: string;
  customer_id: string;
  aicall_id: string;
  ai_id: string;
  prompt_history_id: string | null;
  status: AiAuditStatus;
  overall_score: number | null;
  evaluation: Record<string, unknown> | null;
  message_ids: string[] | null;
  language: string;
  error: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
