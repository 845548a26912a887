// Outbound calls as control-api asks for them: a media-app platform with the real BullMQ command bus on
// its key prefix (the test publishes originate commands on it), and the call row POST /calls writes
// before a node dials it.
import { Redis } from 'ioredis';
import { CommandBus } from '../../core/commands/bus';
import type { Knex } from '../../core/db/knex';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { killAllSipp, startPlatform, type Platform } from './harness';

export interface BusPlatform {
  p: Platform;
  bus: CommandBus;
  close(): Promise<void>;
}

/** A platform (`env` over egress to loopback) and a command bus on its key prefix; `close` ends both and every sipp. */
export async function startBusPlatform(env: Record<string, string> = {}): Promise<BusPlatform> {
  const p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', ...env });
  const busRedis = new Redis(process.env.TEST_REDIS_URL!, { maxRetriesPerRequest: 2 });
  const bus = new CommandBus({ redis: busRedis, keyPrefix: p.config.redisKeyPrefix });
  return {
    p,
    bus,
    async close() {
      killAllSipp();
      await bus.close();
      busRedis.disconnect();
      await p.close();
    },
  };
}

/** The call row of an outgoing call still dialing: from +15550001111 to the SIP URI `target`, running `flowId`. */
export function dialingCall(db: Knex, customerId: string, flowId: string, target: string, data?: Record<string, unknown>): Promise<CallRow> {
  return callsRepo(db).create({
    customer_id: customerId,
    flow_id: flowId,
    source: { type: 'tel', target: '+15550001111' },
    destination: { type: 'sip', target },
    direction: 'outgoing',
    status: 'dialing',
    ...(data ? { data } : {}),
  });
}
