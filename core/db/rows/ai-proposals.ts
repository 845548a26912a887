/** Row types of core/repos/ai-proposals.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export type ProposalStatus = 'progressing' | 'completed' | 'failed' | 'accepted' | 'rejected' | 'expired';

export interface ProposalRow {
  id: string;
  customer_id: string;
  ai_id: string;
  audit_ids: string[];
  basis_prompt_history_id: string | null;
  original_prompt: string;
  proposed_prompt: string;
  rationale: string;
  status: ProposalStatus;
  error: string;
  applied_prompt_history_id: string | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
