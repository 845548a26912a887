/**
 * activeflow.start: run an activeflow that control-api wrote (POST /activeflows, campaign flows,
 * message flows). It has no call of its own; the `call` action and friends originate through this
 * node. Delivery is at least once, so a Redis claim (the activeflow → node key control-api reads to
 * route stop and continue) lets exactly one node run it, and only while it is still untouched.
 */
import { activeflowNodeKey } from '../../core/commands/bus';
import { activeflowsRepo } from '../../core/repos/activeflows';
import type { CallFactory } from './factory';

const CLAIM_TTL_SEC = 86_400;

export async function startStoredActiveflow(factory: CallFactory, activeflowId: string, customerId: string): Promise<void> {
  const { db, redis, config, calls, logger } = factory.deps;
  const repo = activeflowsRepo(db);
  const row = await repo.get(activeflowId);
  // gone, someone else's, stopped before it ran, or already run by an earlier delivery
  if (!row || row.customer_id !== customerId || row.status !== 'running' || row.executed_actions.length > 0 || factory.manager.get(activeflowId)) return;
  const key = config.redisKeyPrefix + activeflowNodeKey(activeflowId);
  if ((await redis.set(key, calls.nodeId, 'EX', CLAIM_TTL_SEC, 'NX')) !== 'OK') return;
  try {
    const session = await factory.manager.start({
      id: row.id,
      customer_id: row.customer_id,
      flow_id: row.flow_id,
      reference_type: row.reference_type,
      reference_id: row.reference_id,
      reference_activeflow_id: row.reference_activeflow_id,
      on_complete_flow_id: row.on_complete_flow_id,
      variables: row.variables,
      webhook_uri: row.webhook_uri,
      webhook_method: row.webhook_method,
      complete_count: row.complete_count,
      originator: { originate: (req) => factory.originateFromFlow(row.customer_id, req, null) },
      adopt: true,
    });
    void session.done.finally(() => redis.del(key).catch(() => undefined));
  } catch (err) {
    await redis.del(key).catch(() => undefined);
    logger.warn({ err: (err as Error).message, activeflow: activeflowId }, 'activeflow start failed');
    await repo.endOrphan(activeflowId, 'error', (err as Error).message);
  }
}
