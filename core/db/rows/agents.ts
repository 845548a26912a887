/** Row types of core/repos/agents.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { Address } from '../../address';

export const AGENT_STATUSES = ['', 'available', 'away', 'busy', 'offline', 'ringing'] as const;

export type AgentStatus = (typeof AGENT_STATUSES)[number];

export const RING_METHODS = ['ringall', 'linear'] as const;

/** The spec's Address (core/address.ts), under the name this repository exported. */
export type AgentAddress = Address;

export interface AgentRow {
  id: string;
  customer_id: string;
  username: string;
  password_hash: string;
  name: string;
  detail: string;
  ring_method: (typeof RING_METHODS)[number];
  status: AgentStatus;
  permission: number;
  tag_ids: string[];
  addresses: AgentAddress[];
  direct_hash: string;
  /** Raised by a password change and an account freeze: login/delegate tokens of a lower `gen` are refused. */
  session_generation: number;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
