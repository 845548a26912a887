/**
 * A flow's ai_talk may pin a version of its AI (`ai_version`, issue 56, docs/evals.md "Agent versions").
 * The pin is checked when the flow is written, against the database the zod option check cannot see:
 * the action names an AI of the customer's (not a team), and that AI has that version. A pin that
 * names no version is refused here with the action's index and field; ai_talk never falls back to the
 * latest (media-app/ai/talk.ts fails the action if a version is missing when it runs).
 */
import type { Db } from '../core/db/knex';
import { flowInvalid, isUnset, type FlowProblem } from '../core/flow';
import { aisRepo } from '../core/repos/ais';
import { aiVersionsRepo } from '../core/repos/ai-versions';

interface Pin {
  index: number;
  field: string;
  option: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every ai_talk with an ai_version in the list, nested lists included, with its top-level index and path. */
function pinsOf(v: unknown, path: string, index: number, out: Pin[]): Pin[] {
  if (Array.isArray(v)) v.forEach((x, i) => pinsOf(x, `${path}[${i}]`, index === -1 ? i : index, out));
  else if (isObject(v)) {
    if (v.type === 'ai_talk' && isObject(v.option) && v.option.ai_version !== undefined) out.push({ index, field: `${path}.option.ai_version`, option: v.option });
    for (const [k, x] of Object.entries(v)) if (typeof x === 'object') pinsOf(x, `${path}.${k}`, index, out);
  }
  return out;
}

/** Throws INVALID_ARGUMENT (the flow's problem shape) for each pinned version that does not exist. */
export async function checkAiVersionPins(db: Db, customerId: string, actions: unknown, field = 'actions'): Promise<void> {
  const problems: FlowProblem[] = [];
  for (const p of pinsOf(actions, field, -1, [])) {
    const problem = (message: string) => problems.push({ index: p.index, field: p.field, message });
    // the AI the action names, as ai_talk reads it (media-app/ai/assistance.ts): assistance_id, else the deprecated ai_id
    const named = !isUnset(p.option.assistance_id);
    const aiId = named ? (p.option.assistance_id as string) : isUnset(p.option.ai_id) ? '' : (p.option.ai_id as string);
    const n = p.option.ai_version as number;
    if (named && p.option.assistance_type === 'team') problem('a version is of an AI: assistance_type must be ai');
    else if (!aiId) problem('ai_version needs the AI it is a version of (assistance_id)');
    else if (!(await aisRepo(db).get(customerId, aiId))) problem(`no AI ${aiId} of this customer`);
    else if (!(await aiVersionsRepo(db).existing(customerId, aiId, [n])).length) problem(`AI ${aiId} has no version ${n}`);
  }
  if (problems.length) throw flowInvalid(problems);
}
