/**
 * Starts a message flow the way POST /activeflows does: write the activeflow (status running,
 * reference conversation) and send activeflow.start on the command bus; a media-app node runs it.
 */
import type { Knex } from 'knex';
import { flowsRepo } from '../repos/flows';
import { startStoredActiveflow } from '../flow/stored-activeflow';
import type { CommandBus } from '../commands/bus';
import type { FlowStarter } from './deps';

export function busFlowStarter(db: Knex, bus: Pick<CommandBus, 'startActiveflow'>): FlowStarter {
  return async ({ customerId, flowId, referenceType, referenceId, variables }) => {
    const flow = await flowsRepo(db).getOwned(customerId, flowId);
    if (!flow) throw new Error(`message flow ${flowId} not found`);
    const row = await startStoredActiveflow(db, bus, { customerId, flowId: flow.id, onCompleteFlowId: flow.on_complete_flow_id, referenceType, referenceId, variables });
    return row.id;
  };
}
