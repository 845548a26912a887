// Test data for the scale suites: a customer, its IP trunk and a number running a flow.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { repos } from '../../core/repos';

/** A customer with a trunk for `cidr` and a number whose flow runs `actions`. */
export async function numberWithFlow(db: Knex, cidr: string, actions: unknown[], customerId?: string): Promise<{ customerId: string; number: string }> {
  const tag = randomBytes(4).toString('hex');
  const cid = customerId ?? (await repos(db).customers.create({ email: `sc${tag}@example.test`, status: 'active', name: 'sc' })).id;
  if (!customerId && cidr) await trunksRepo(db).create(cid, `sc${tag}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: [cidr] });
  const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions(actions as never) } as never);
  const number = `+8996${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
  await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
  return { customerId: cid, number };
}

export const TALK = [{ type: 'answer' }, { type: 'talk', option: { text: 'Hello from the cluster.', language: 'en-US' } }, { type: 'hangup' }];
