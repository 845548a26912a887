/**
 * /ais/{id}/versions: the numbered versions of an AI's configuration (issue 56, docs/evals.md "Agent
 * versions"), read-only: each create and each update that changed a field made one (core/repos/ai-versions.ts).
 * A flow's ai_talk pins one with `ai_version`; an eval run runs two side by side.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { notFound } from '../../core/errors';
import { aisRepo, aiVersionJson } from '../../core/repos/ais';
import { aiVersionsRepo, type AiVersionCreator } from '../../core/repos/ai-versions';
import { AI_VERSIONED_FIELDS } from '../../core/db/rows/ais';
import type { AuthContext } from '../context';
import { legacyTime, listOf, uuidOut } from './schemas';

/** Who a request acts for, as a version records it: the access key, or the agent (a delegate's too). */
export function creatorOf(auth: AuthContext): AiVersionCreator {
  switch (auth.kind) {
    case 'accesskey':
      return { type: 'accesskey', id: auth.accesskeyId };
    case 'agent':
    case 'delegate':
      return { type: auth.kind, id: auth.agentId };
    case 'direct':
      return { type: 'direct', id: auth.resourceId };
  }
}

const versionSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  ai_id: uuidOut(),
  number: z.number().int().describe('1 for the AI as created, then one more for each update that changed a field'),
  config: z.record(z.string(), z.unknown()).describe("the AI's configuration in this version (the fields of an AI that make it; keys masked)"),
  changed: z.array(z.enum(AI_VERSIONED_FIELDS)).describe('the fields this version changed (every field for version 1)'),
  created_by: z
    .object({ type: z.enum(['accesskey', 'agent', 'delegate', 'direct', 'system']), id: uuidOut() })
    .describe('the access key or agent whose request made it; system: the platform (migration)'),
  tm_create: legacyTime(),
});
const versionParams = z.object({
  id: uuid(),
  number: z
    .string()
    .regex(/^[1-9]\d{0,8}$/, 'a version number: 1, 2, ...')
    .describe('the version number'),
});
const tag = 'AI';
const missing = () => notFound('AI_NOT_FOUND', 'ai not found');

export const routes = [
  defineRoute({
    method: 'get',
    path: '/ais/:id/versions',
    tag,
    summary: 'List the versions of an AI (newest first)',
    permission: 'agent',
    params: idParams,
    paginated: true,
    response: listOf(versionSchema),
    handler: async ({ ctx, auth, params, page }) => {
      if (!(await aisRepo(ctx.db).get(auth.customerId, params.id))) throw missing();
      const p = await aiVersionsRepo(ctx.db).list(auth.customerId, params.id, page);
      return { result: p.result.map(aiVersionJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/ais/:id/versions/:number',
    tag,
    summary: 'Get one version of an AI',
    permission: 'agent',
    params: versionParams,
    response: versionSchema,
    handler: async ({ ctx, auth, params }) => {
      if (!(await aisRepo(ctx.db).get(auth.customerId, params.id))) throw missing();
      const v = await aiVersionsRepo(ctx.db).get(auth.customerId, params.id, Number(params.number));
      if (!v) throw notFound('RESOURCE_NOT_FOUND', `ai ${params.id} has no version ${params.number}`);
      return aiVersionJson(v);
    },
  }),
];
