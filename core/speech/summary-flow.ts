/**
 * A summary's on_end_flow_id: when the summary is done, that flow runs as a new activeflow
 * (reference_type `ai`, reference_id the summary, reference_activeflow_id the activeflow that asked
 * for it, if any) with the summary in its variables: svc.ai_summary.{id, content, status, language,
 * reference_type, reference_id}. Written like POST /activeflows and started the same way
 * (activeflow.start on the shared queue), so any media-app node runs it.
 */
import type { Db } from '../db/knex';
import type { CommandBus } from '../commands/bus';
import { EMPTY_UUID } from '../ids';
import type { ActiveflowRow } from '../repos/activeflows';
import { startStoredActiveflow } from '../flow/stored-activeflow';
import { flowsRepo } from '../repos/flows';
import type { SummaryRow } from '../repos/summaries';

export function summaryVariables(s: SummaryRow): Record<string, string> {
  return {
    'svc.ai_summary.id': s.id,
    'svc.ai_summary.content': s.content ?? '',
    'svc.ai_summary.status': s.status,
    'svc.ai_summary.language': s.language ?? '',
    'svc.ai_summary.reference_type': s.reference_type,
    'svc.ai_summary.reference_id': s.reference_id,
  };
}

/** Starts the summary's on_end_flow_id; null when it has none or the flow is gone (nothing to run). */
export async function startSummaryFlow(db: Db, bus: CommandBus, s: SummaryRow): Promise<ActiveflowRow | null> {
  if (!s.on_end_flow_id || s.on_end_flow_id === EMPTY_UUID || s.status !== 'done') return null;
  const flow = await flowsRepo(db).getOwned(s.customer_id, s.on_end_flow_id);
  if (!flow) return null;
  return startStoredActiveflow(db, bus, {
    customerId: s.customer_id,
    flowId: flow.id,
    onCompleteFlowId: flow.on_complete_flow_id,
    referenceType: 'ai',
    referenceId: s.id,
    referenceActiveflowId: s.activeflow_id,
    variables: summaryVariables(s),
  });
}
