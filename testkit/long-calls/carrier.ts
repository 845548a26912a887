// A carrier on loopback for the long-call tests that dial a telephone number: the customer's route
// sends every number to a provider at 127.0.0.1:<port> (a sipp party listening there stands in for the
// carrier), the outbound config lets US numbers out and presents an owned number, and the billing
// account holds enough for a long call (the credit guard ends a PSTN call the balance cannot pay).
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { addBalance, ensureBillingAccount } from '../../core/billing';
import { numbersRepo } from '../../core/repos/numbers';
import { routesRepo } from '../../core/repos/routes';
import { repos } from '../../core/repos';
import { sipProvider } from '../providers';

/** Routes `customerId`'s telephone numbers to the carrier at 127.0.0.1:`port`; returns the caller id it presents. */
export async function carrierOnLoopback(db: Knex, customerId: string, port: number): Promise<{ callerId: string }> {
  const tag = randomBytes(3).toString('hex');
  const provider = await sipProvider(db, `127.0.0.1:${port}`, `carrier ${tag}`);
  await routesRepo(db).create({ customer_id: customerId, name: `all ${tag}`, detail: '', provider_id: provider.id, priority: 1, target: 'all' });
  // the carrier sees an owned number (core/calls/caller-id.ts), and the toll-fraud policy lets US numbers out
  const callerId = `+1555${String(Date.now()).slice(-7)}`;
  const number = await numbersRepo(db).create({ customer_id: customerId, number: callerId, type: 'normal' });
  const configs = repos(db).outboundConfigs;
  const config = (await configs.getForCustomer(customerId)) ?? (await configs.create({ customer_id: customerId, destination_whitelist: [] }));
  await configs.update(config.id, { destination_whitelist: ['us'], default_outgoing_source_number_id: number.id });
  const account = await ensureBillingAccount(db, customerId);
  await addBalance(db, account.id, 1_000_000_000, `long-calls:${account.id}:${tag}`);
  return { callerId };
}
