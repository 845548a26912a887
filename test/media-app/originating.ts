// A platform that originates calls as control-api asks it to: the media-app node with the real BullMQ
// command bus on its key prefix, and a customer who may call numbers (a provider on a loopback port,
// a route for every number, the US whitelisted, a balance).
import { Redis } from 'ioredis';
import { CommandBus } from '../../core/commands/bus';
import { addBalance, ensureBillingAccount } from '../../core/billing';
import { repos } from '../../core/repos';
import { providersRepo } from '../../core/repos/providers';
import { routesRepo } from '../../core/repos/routes';
import type { Knex } from '../../core/db/knex';
import { killAllSipp, startPlatform, type Platform } from './harness';

export interface Originating {
  p: Platform;
  bus: CommandBus;
  close(): Promise<void>;
}

export async function startOriginating(env: Record<string, string> = {}): Promise<Originating> {
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

/** A provider whose gateway is sipp on 127.0.0.1:`port`, routed for every number of `customerId`. */
export async function providerRoute(db: Knex, customerId: string, port: number, name = 'gw', priority = 1): Promise<string> {
  const provider = await providersRepo(db).create({
    type: 'sip', hostname: `127.0.0.1:${port}`, tech_prefix: '', tech_postfix: '', tech_headers: {}, transport: 'udp',
    auth_username: '', auth_password: '', codecs: [], name, detail: '',
  } as never);
  await routesRepo(db).create({ customer_id: customerId, name: `r-${name}`, detail: '', provider_id: provider.id, priority, target: 'all' });
  return provider.id;
}

/** A customer who may call US numbers through a provider on `port`, with `balance` micros; returns it and its billing account. */
export async function pstnCustomer(db: Knex, port: number, balance = 1_000_000): Promise<{ cid: string; accountId: string }> {
  const cid = (await repos(db).customers.create({ email: `pstn${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'pstn' })).id;
  await providerRoute(db, cid, port);
  await repos(db).outboundConfigs.create({ customer_id: cid, destination_whitelist: ['us'] });
  const account = await ensureBillingAccount(db, cid);
  if (balance > 0) await addBalance(db, account.id, balance, `pstn:${cid}`);
  return { cid, accountId: account.id };
}
