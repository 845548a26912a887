/**
 * Where a scenario's simulated caller dials (issue 56, docs/evals.md "Targets"). Every call enters through
 * the SIP edge as a phone's would, so a target is reached under a number of the customer's: `number` is
 * that number; `flow` the customer's number whose call flow it is; `ai` the customer's number whose call
 * flow runs that AI configuration with ai_talk (a top-level action). More than one: the lowest number, so
 * every call of a run dials the same. None: refused, saying what to route. Read when the scenario is
 * written and again by the worker before each call (a number may have moved since).
 */
import type { Db } from '../db/knex';
import type { EvalTarget } from './schema';

/** `refused` says why in a sentence, `issue` in a few words (an error detail's issue). */
export type ResolvedTarget = { number: string } | { refused: string; issue: string };

async function numberOfFlows(db: Db, customerId: string, flowIds: string[]): Promise<string | null> {
  if (!flowIds.length) return null;
  const row = (await db('numbers').whereNull('tm_delete').where({ customer_id: customerId }).whereIn('call_flow_id', flowIds).orderBy('number').select('number').first()) as
    { number: string } | undefined;
  return row?.number ?? null;
}

async function liveFlow(db: Db, customerId: string, id: string): Promise<boolean> {
  return !!(await db('flows').whereNull('tm_delete').where({ id, customer_id: customerId }).first('id'));
}

async function flowsRunningAi(db: Db, customerId: string, aiId: string): Promise<string[]> {
  const runs = JSON.stringify([{ type: 'ai_talk', option: { assistance_id: aiId } }]);
  const rows = (await db('flows').whereNull('tm_delete').where({ customer_id: customerId, persist: true }).whereRaw('actions @> ?::jsonb', [runs]).select('id')) as { id: string }[];
  return rows.map((r) => r.id);
}

/** The number a call to `target` dials, or why it cannot be reached through the edge. */
export async function resolveTarget(db: Db, customerId: string, target: EvalTarget): Promise<ResolvedTarget> {
  if (target.type === 'number') {
    const n = (await db('numbers').whereNull('tm_delete').where({ number: target.target }).first('customer_id')) as { customer_id: string } | undefined;
    return n?.customer_id === customerId ? { number: target.target } : { refused: `${target.target} is not a number of this customer`, issue: 'not a number of this customer' };
  }
  if (target.type === 'flow') {
    if (!(await liveFlow(db, customerId, target.target))) return { refused: `flow ${target.target} is not a flow of this customer`, issue: 'not a flow of this customer' };
    const number = await numberOfFlows(db, customerId, [target.target]);
    return number
      ? { number }
      : { refused: `flow ${target.target} has no number: a simulated call enters through the SIP edge, so give the flow a number (its call_flow_id)`, issue: 'no number routes to this flow' };
  }
  const ai = await db('ais').whereNull('tm_delete').where({ id: target.target, customer_id: customerId }).first('id');
  if (!ai) return { refused: `AI ${target.target} is not an AI configuration of this customer`, issue: 'not an AI of this customer' };
  const number = await numberOfFlows(db, customerId, await flowsRunningAi(db, customerId, target.target));
  return number
    ? { number }
    : {
        refused: `AI ${target.target} is on no number: a simulated call enters through the SIP edge, so give a number a call flow whose ai_talk runs this AI`,
        issue: 'no number routes to a flow running this AI',
      };
}
