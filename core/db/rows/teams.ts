/** Row types of core/repos/teams.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export interface TeamTransition {
  function_name: string;
  description: string;
  next_member_id: string;
}

export interface TeamMember {
  id: string;
  name: string;
  ai_id: string;
  transitions: TeamTransition[];
}

export interface TeamRow {
  id: string;
  customer_id: string;
  name: string;
  detail: string;
  start_member_id: string;
  members: TeamMember[];
  parameter: Record<string, unknown>;
  direct_hash: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
