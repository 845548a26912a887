/**
 * The Activeflow record (voipbin FlowManagerActiveflow), plus variables and why it ended: what the flow
 * runner (media-app/flow/) hands its store, and what core/repos/activeflows.ts writes and reads back.
 * Declared here once: core may not import media-app, and media-app/flow/record.ts re-exports it.
 */
import type { Action } from './action';

export type ActiveflowStatus = '' | 'running' | 'ended';
export type ReferenceType = '' | 'ai' | 'api' | 'call' | 'campaign' | 'conversation' | 'transcribe' | 'recording';

/** Why an activeflow ended; '' while running. */
export type EndReason =
  | ''
  | 'finished' // ran past its last action
  | 'stop_action' // a stop action
  | 'stopped' // stopped from outside (POST /activeflows/{id}/stop)
  | 'call_hangup' // its call hung up
  | 'error' // an action failed (message in `error`)
  | 'limit'; // executed-action cap reached

export interface ExecutedAction extends Action {
  tm_execute: string;
}

export interface ActiveflowRecord {
  id: string;
  customer_id: string;
  flow_id: string;
  status: ActiveflowStatus;
  reference_type: ReferenceType;
  reference_id: string;
  reference_activeflow_id: string;
  on_complete_flow_id: string;
  webhook_uri: string;
  webhook_method: '' | 'POST' | 'GET' | 'PUT' | 'DELETE';
  current_action: Action | null;
  forward_action_id: string;
  /**
   * Append-only and shared between the records of one activeflow (copying it on every action made
   * long flows quadratic): serialize a record when you receive it, or copy the array.
   */
  executed_actions: ExecutedAction[];
  variables: Record<string, string>;
  /** How many on_complete hops led here (0 for the first activeflow of a chain). */
  complete_count: number;
  end_reason: EndReason;
  /** Human-readable cause when end_reason is error or limit. */
  error: string;
  tm_create: string;
  tm_update: string;
  tm_delete: string | null;
}
