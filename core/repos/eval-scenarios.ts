/** eval_scenarios: a customer's voice agent eval scenarios (issue 56, docs/evals.md); delete is soft. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { EvalScenarioInput } from '../evals/schema';
import type { EvalScenarioRow } from '../db/rows/evals';
export type { EvalScenarioRow, EvalRunScenario } from '../db/rows/evals';

export function evalScenarioJson(s: EvalScenarioRow) {
  return {
    id: s.id,
    customer_id: s.customer_id,
    name: s.name,
    target: s.target,
    caller: s.caller,
    checks: s.checks,
    tm_create: formatLegacy(s.tm_create),
    tm_update: formatLegacy(s.tm_update),
    tm_delete: formatLegacy(s.tm_delete),
  };
}

const columns = (input: EvalScenarioInput) => ({
  name: input.name,
  target: JSON.stringify(input.target),
  caller: JSON.stringify(input.caller),
  checks: JSON.stringify(input.checks),
});

export function evalScenariosRepo(db: Db) {
  const live = () => db('eval_scenarios').whereNull('tm_delete');
  return {
    async create(customerId: string, input: EvalScenarioInput): Promise<EvalScenarioRow> {
      const [row] = await db('eval_scenarios')
        .insert({ id: newId(), customer_id: customerId, ...columns(input), tm_create: clock.now() })
        .returning('*');
      return row!;
    },
    async get(customerId: string, id: string): Promise<EvalScenarioRow | null> {
      return (await live().where({ id, customer_id: customerId }).first()) ?? null;
    },
    /** The live scenarios of these ids that are the customer's (any other id is simply absent). */
    async many(customerId: string, ids: string[]): Promise<EvalScenarioRow[]> {
      return live().where({ customer_id: customerId }).whereIn('id', ids);
    },
    async list(customerId: string, params: PageParams): Promise<Page<EvalScenarioRow>> {
      return toPage(await paginate<EvalScenarioRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    async update(customerId: string, id: string, input: EvalScenarioInput): Promise<EvalScenarioRow | null> {
      const [row] = await live()
        .where({ id, customer_id: customerId })
        .update({ ...columns(input), tm_update: clock.now() })
        .returning('*');
      return row ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<EvalScenarioRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return row ?? null;
    },
  };
}
