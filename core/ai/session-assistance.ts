/** What an AI session's start reads: the AI (or team) it names, and the AI as a pinned version had it. */
import { aisRepo, type AiRow } from '../repos/ais';
import { aiAtVersion, aiVersionsRepo } from '../repos/ai-versions';
import { teamsRepo, type TeamRow } from '../repos/teams';
import type { AiDeps, StartOptions } from './session';

export class AiNotFound extends Error {}

/** The AI (or the team and its start member's AI) the session names. */
export async function assistanceOf(deps: AiDeps, opts: StartOptions): Promise<{ ai: AiRow; team: TeamRow | null }> {
  const ais = aisRepo(deps.db);
  if (opts.assistanceType !== 'team') {
    const ai = await ais.get(opts.customerId, opts.assistanceId);
    if (!ai) throw new AiNotFound(`ai ${opts.assistanceId} not found`);
    return { ai, team: null };
  }
  const team = await teamsRepo(deps.db).get(opts.customerId, opts.assistanceId);
  if (!team) throw new AiNotFound(`team ${opts.assistanceId} not found`);
  const m = team.members.find((x) => x.id === team.start_member_id) ?? team.members[0];
  const ai = m ? await ais.get(opts.customerId, m.ai_id) : null;
  if (!ai) throw new AiNotFound(`the start member of team ${opts.assistanceId} has no AI`);
  return { ai, team };
}

/** The AI as its pinned version had it; a team, or a version the AI does not have, is refused (no fallback to the latest). */
export async function atVersion(deps: AiDeps, opts: StartOptions & { aiVersion: number }, ai: AiRow): Promise<AiRow> {
  if (opts.assistanceType !== 'ai') throw new AiNotFound(`ai_version pins a version of an AI, not of a ${opts.assistanceType}`);
  const v = await aiVersionsRepo(deps.db).get(opts.customerId, ai.id, opts.aiVersion);
  if (!v) throw new AiNotFound(`ai ${ai.id} has no version ${opts.aiVersion}`);
  const at = aiAtVersion(ai, v);
  if ('error' in at) throw new AiNotFound(at.error);
  return at;
}
