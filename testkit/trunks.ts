// A customer's trunk as the call suites make it: callers trusted by address from loopback (sipp, the
// test phones), no credentials.
import type { Knex } from '../core/db/knex';
import { repos } from '../core/repos';
import { trunksRepo, type TrunkFields, type TrunkRow } from '../core/repos/trunks';

/** A trunk of `customerId` under `domainName` that admits calls from 127.0.0.1 by address; `more` adds to or overrides the fields. */
export function loopbackTrunk(db: Knex, customerId: string, domainName: string, more: Partial<TrunkFields> = {}): Promise<TrunkRow> {
  return trunksRepo(db).create(customerId, domainName, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'], ...more });
}

/** A customer of its own (active, named `name`, a unique email) with a loopback trunk under a unique domain name: a call test's caller. */
export async function trunkCustomer(db: Knex, name: string): Promise<{ customerId: string; trunk: TrunkRow }> {
  const customerId = (await repos(db).customers.create({ email: `${name}${Date.now()}${Math.random()}@example.test`, status: 'active', name })).id;
  const trunk = await loopbackTrunk(db, customerId, `${name}${Date.now()}${Math.floor(Math.random() * 1000)}`);
  return { customerId, trunk };
}
