/**
 * All repositories over one knex handle. Pass a transaction to make a multi-row create atomic:
 *   await db.transaction(async (trx) => { const r = repos(trx); ... })
 */
import type { Db } from '../db/knex';
import { customersRepo } from './customers';
import { agentsRepo } from './agents';
import { accesskeysRepo } from './accesskeys';
import { outboundConfigsRepo } from './outbound-configs';

export function repos(db: Db) {
  return {
    customers: customersRepo(db),
    agents: agentsRepo(db),
    accesskeys: accesskeysRepo(db),
    outboundConfigs: outboundConfigsRepo(db),
  };
}
export type Repos = ReturnType<typeof repos>;

export * from './customers';
export * from './agents';
export * from './accesskeys';
export * from './outbound-configs';
