/**
 * Starts a message flow the way POST /activeflows does: write the activeflow (status running,
 * reference conversation) and send activeflow.start on the command bus; a media-app node runs it.
 */
import type { Knex } from 'knex';
import { EMPTY_UUID, newId } from '../ids';
import { clock } from '../clock';
import { flowsRepo } from '../repos/flows';
import { activeflowsRepo } from '../repos/activeflows';
import type { CommandBus } from '../commands/bus';
import type { FlowStarter } from './deps';

export function busFlowStarter(db: Knex, bus: Pick<CommandBus, 'startActiveflow'>): FlowStarter {
  return async ({ customerId, flowId, referenceType, referenceId, variables }) => {
    const flow = await flowsRepo(db).getOwned(customerId, flowId);
    if (!flow) throw new Error(`message flow ${flowId} not found`);
    const id = newId();
    const now = clock.now().toISOString();
    await activeflowsRepo(db).insert({
      id,
      customer_id: customerId,
      flow_id: flow.id,
      status: 'running',
      reference_type: referenceType,
      reference_id: referenceId,
      reference_activeflow_id: EMPTY_UUID,
      on_complete_flow_id: flow.on_complete_flow_id,
      webhook_uri: '',
      webhook_method: '',
      current_action: null,
      forward_action_id: '',
      executed_actions: [],
      variables,
      complete_count: 0,
      end_reason: '',
      error: '',
      tm_create: now,
      tm_update: now,
      tm_delete: null,
    });
    try {
      await bus.startActiveflow(id, customerId, `activeflow-start-${id}`);
    } catch (err) {
      await activeflowsRepo(db).endOrphan(id, 'error', 'could not reach a media-app node');
      throw err;
    }
    return id;
  };
}
