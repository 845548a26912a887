// A platform that originates calls as control-api asks it to: the media-app node with the real BullMQ
// command bus on its key prefix, and a customer who may call numbers (a provider on a loopback port,
// a route for every number, the US whitelisted, a balance).
import { sipProvider } from '../../testkit/providers';
import { addBalance, ensureBillingAccount } from '../../core/billing';
import { repos } from '../../core/repos';
import { routesRepo } from '../../core/repos/routes';
import { numbersRepo } from '../../core/repos/numbers';
import type { Knex } from '../../core/db/knex';

import { truncateAll } from '../../testkit/db';
import { startBusPlatform, type BusPlatform } from '../../testkit/media-app/originate';

export { startBusPlatform as startOriginating, type BusPlatform as Originating } from '../../testkit/media-app/originate';

/** Before the suite: the tables truncated and the originating platform started on `env`, handed to `ready`; closed after it. */
export function useOriginating(env: Record<string, string>, ready: (o: BusPlatform) => void): void {
  let o: BusPlatform | undefined;
  before(async () => {
    await truncateAll();
    o = await startBusPlatform(env);
    ready(o);
  });
  after(async () => o?.close());
}

/** A provider whose gateway is sipp on 127.0.0.1:`port`, routed for every number of `customerId`. */
export async function providerRoute(db: Knex, customerId: string, port: number, name = 'gw', priority = 1): Promise<string> {
  const provider = await sipProvider(db, `127.0.0.1:${port}`, name);
  await routesRepo(db).create({ customer_id: customerId, name: `r-${name}`, detail: '', provider_id: provider.id, priority, target: 'all' });
  return provider.id;
}

/** A customer (new, or `customerId`) who may call US numbers through a provider on `port`, with `balance` micros; returns it and its billing account. */
export async function pstnCustomer(db: Knex, port: number, balance = 1_000_000, customerId?: string): Promise<{ cid: string; accountId: string }> {
  const cid = customerId ?? (await repos(db).customers.create({ email: `pstn${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'pstn' })).id;
  await providerRoute(db, cid, port);
  await repos(db).outboundConfigs.create({ customer_id: cid, destination_whitelist: ['us'] });
  const account = await ensureBillingAccount(db, cid);
  if (balance > 0) await addBalance(db, account.id, balance, `pstn:${cid}`);
  return { cid, accountId: account.id };
}

let numberSeq = 0;

/**
 * An active normal number of `customerId` (a fresh +1555… unless `number` is given), a source the
 * caller-id rule lets through (core/calls/caller-id); with `asDefault` it also becomes the outbound
 * config's default_outgoing_source_number_id (the config is made when the customer has none).
 */
export async function ownNumber(db: Knex, customerId: string, opts: { number?: string; asDefault?: boolean; callFlowId?: string } = {}): Promise<string> {
  const number = opts.number ?? `+1555${String(process.pid % 1000).padStart(3, '0')}${String(++numberSeq).padStart(4, '0')}`;
  const row = await numbersRepo(db).create({ customer_id: customerId, number, type: 'normal', ...(opts.callFlowId ? { call_flow_id: opts.callFlowId } : {}) });
  if (opts.asDefault) {
    const config = (await repos(db).outboundConfigs.getForCustomer(customerId)) ?? (await repos(db).outboundConfigs.create({ customer_id: customerId, destination_whitelist: [] }));
    await repos(db).outboundConfigs.update(config.id, { default_outgoing_source_number_id: row.id });
  }
  return number;
}
