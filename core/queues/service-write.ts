/**
 * The agent answered: the caller's queuecall goes to service and its agent to busy in one transaction,
 * so no reader (the API, another node) sees a caller served by an agent still ringing. Each event is
 * published once, after the commit, the agent's first.
 */
import type { Db } from '../db/knex';
import type { EventPublisher } from '../events/bus';
import { publishAgent, setAgentStatus } from '../agents/status';
import { queuecallsRepo, type QueuecallRow } from '../repos/queuecalls';
import { publishQueuecallStatus } from './events';

/** connecting → service with `extra`, the agent ringing → busy; null (nothing written) when the queuecall was not connecting. */
export async function startService(db: Db, publisher: EventPublisher, queuecallId: string, agentId: string, extra: Partial<QueuecallRow>): Promise<QueuecallRow | null> {
  const done = await db.transaction(async (trx) => {
    const queuecall = await queuecallsRepo(trx).transition(queuecallId, 'service', extra, ['connecting']);
    if (!queuecall) return null;
    return { queuecall, agent: await setAgentStatus(trx, null, agentId, 'busy', ['ringing']) };
  });
  if (!done) return null;
  if (done.agent) await publishAgent(publisher, 'agent_status_updated', done.agent);
  await publishQueuecallStatus(publisher, done.queuecall);
  return done.queuecall;
}
