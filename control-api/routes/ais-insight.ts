/**
 * POST /ais/{id}/activate_insight: the AI becomes the customer's active Insight AI (the one a contact
 * case's assistant uses, POST /service_agents/aicalls without assistance_id); the one active before
 * is deactivated in the same transaction. Only a type=insight AI (else 400); activating the active
 * one changes nothing. Each AI that changed is published as ai_updated.
 */
import { defineRoute, idParams, type AnyRoute } from '../route';
import { invalidArgument, notFound } from '../../core/errors';
import { aiJson, aisRepo } from '../../core/repos/ais';
import { publish, shape } from '../../core/ai/api';
import { AI_FIELDS } from './ais';

export const routes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/ais/:id/activate_insight',
    tag: 'AI',
    summary: "Make this Insight AI the customer's active one (the previous one is deactivated)",
    permission: 'manager',
    params: idParams,
    response: shape(AI_FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const repo = aisRepo(ctx.db);
      const ai = await repo.get(auth.customerId, params.id);
      if (!ai) throw notFound('AI_NOT_FOUND', 'ai not found');
      if (ai.type !== 'insight') throw invalidArgument(`the AI is of type ${ai.type || 'normal'}; only an insight AI can be activated`, [{ field: 'id', issue: 'not an insight AI' }]);
      const changed = await repo.activateInsight(ai);
      if (!changed.length) throw notFound('AI_NOT_FOUND', 'ai not found');
      if (!ai.is_insight_active) for (const row of changed) await publish(ctx, 'ai_updated', aiJson(row));
      return aiJson(changed[0]!);
    },
  }),
];
