/**
 * The flow a new call (POST /calls, POST /groupcalls) runs: a stored flow_id of the customer, or
 * inline actions that get a non-listed flow of their own (written by the caller in its transaction),
 * plus the client variables, checked (values strings, at most 100 keys, `svc.` keys dropped).
 */
import { checkClientVariables, parseActions, type Action } from '../../core/flow';
import { checkAiVersionPins } from '../flow-ai-versions';
import { ApiError, invalidArgument } from '../../core/errors';
import { newId } from '../../core/ids';
import { flowsRepo } from '../../core/repos/flows';
import type { AppContext } from '../context';
import { z } from 'zod';
import { ADDRESS_TYPES } from '../../core/flow/options/common';
import { text, uuid } from '../route';

/** An Address in a request body (reference schema CommonAddress). */
export const addressIn = z.strictObject({
  type: z.enum(ADDRESS_TYPES),
  target: text(1024),
  target_name: text().optional(),
  name: text().optional(),
  detail: text(1024).optional(),
});

/** The body fields every way of starting calls shares (POST /calls, POST /groupcalls). */
export const newCallFields = {
  source: addressIn,
  destinations: z.array(addressIn).min(1).max(100),
  flow_id: uuid().optional(),
  actions: z.array(z.unknown()).optional().describe('inline actions when no flow_id'),
  variables: z.unknown().optional().describe('object of string → string; 100 keys, 64 KB total, 32 KB per value; svc. keys ignored'),
};

export interface CallFlow {
  flowId: string;
  /** Set when the flow is inline: write it as a non-listed flow with this id. */
  actions: Action[] | null;
  variables: Record<string, string>;
}

export async function resolveCallFlow(ctx: AppContext, customerId: string, body: { flow_id?: string; actions?: unknown[]; variables?: unknown }): Promise<CallFlow> {
  const vars = checkClientVariables(body.variables);
  if (vars.problems.length > 0) {
    throw invalidArgument(
      `${vars.problems[0]!.field}: ${vars.problems[0]!.message}`,
      vars.problems.map((p) => ({ field: p.field, issue: p.message })),
    );
  }
  if (body.flow_id !== undefined) {
    const flow = await flowsRepo(ctx.db).getOwned(customerId, body.flow_id);
    if (!flow) throw new ApiError('FLOW_NOT_FOUND', 'flow not found', { details: [{ field: 'flow_id' }] });
    return { flowId: flow.id, actions: null, variables: vars.variables };
  }
  if (body.actions !== undefined) {
    const actions = parseActions(body.actions, { egress: ctx.egress });
    await checkAiVersionPins(ctx.db, customerId, actions);
    return { flowId: newId(), actions, variables: vars.variables };
  }
  throw invalidArgument('flow_id or actions is required', [{ field: 'flow_id', issue: 'required when actions is absent' }]);
}
