/** /aipromptproposals: proposed improvements of an AI's init_prompt; accept applies one (history entry with proposal_id). */
import { z } from 'zod';
import { defineRoute, idParams, orMissing, uuid } from '../route';
import { ApiError, invalidArgument, notFound, stateInvalid } from '../../core/errors';
import { aisRepo, aiJson } from '../../core/repos/ais';
import { proposalJson, proposalsRepo } from '../../core/repos/ai-proposals';
import { generateProposal } from '../../core/ai/proposals';
import { LlmError } from '../../core/llm/client';
import { resolveEndpoint } from '../../core/llm/endpoint';
import { listOfShape, publish, shape } from '../../core/ai/api';
import { creatorOf } from './ais-versions';
import type { AppContext } from '../context';

const FIELDS = [
  'id',
  'customer_id',
  'ai_id',
  'audit_ids',
  'basis_prompt_history_id',
  'original_prompt',
  'proposed_prompt',
  'rationale',
  'status',
  'error',
  'applied_prompt_history_id',
  'tm_create',
  'tm_update',
  'tm_delete',
];
const tag = 'AI';
const missing = () => new ApiError('RESOURCE_NOT_FOUND', 'prompt proposal not found');
/** The customer's proposal, or the 404. */
const ownProposal = (ctx: AppContext, customerId: string, id: string) => orMissing(proposalsRepo(ctx.db).get(customerId, id), missing);

export const routes = [
  defineRoute({
    method: 'post',
    path: '/aipromptproposals',
    tag,
    summary: 'Ask for a prompt proposal for an AI',
    permission: 'manager',
    status: 202,
    body: z.object({ ai_id: uuid(), audit_ids: z.array(uuid()).max(50).optional(), language: z.string().max(35).optional() }),
    response: shape(FIELDS),
    handler: async ({ ctx, auth, body }) => {
      const ai = await aisRepo(ctx.db).get(auth.customerId, body.ai_id);
      if (!ai) throw notFound('AI_NOT_FOUND', 'ai not found');
      try {
        resolveEndpoint(ai);
      } catch (e) {
        if (e instanceof LlmError) throw invalidArgument(`ai_id: ${e.message}`, [{ field: 'ai_id', issue: 'no LLM endpoint' }]);
        throw e;
      }
      const p = await proposalsRepo(ctx.db).create(auth.customerId, {
        ai_id: ai.id,
        audit_ids: body.audit_ids ?? [],
        basis_prompt_history_id: ai.current_prompt_history_id,
        original_prompt: ai.init_prompt,
      });
      void generateProposal(ctx.db, p, ai, body.language, process.env, ctx.egress).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'prompt proposal failed'));
      return proposalJson(p);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/aipromptproposals',
    tag,
    summary: 'List prompt proposals',
    permission: 'agent',
    paginated: true,
    query: z.object({ ai_id: uuid().optional(), status: z.enum(['progressing', 'completed', 'failed', 'accepted', 'rejected', 'expired']).optional() }),
    response: listOfShape(FIELDS),
    handler: async ({ ctx, auth, page, query }) => {
      const p = await proposalsRepo(ctx.db).list(auth.customerId, page, query ?? {});
      return { result: p.result.map(proposalJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/aipromptproposals/:id',
    tag,
    summary: 'Get a prompt proposal',
    permission: 'agent',
    params: idParams,
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params }) => {
      return proposalJson(await ownProposal(ctx, auth.customerId, params.id));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/aipromptproposals/:id',
    tag,
    summary: 'Delete a prompt proposal',
    permission: 'manager',
    params: idParams,
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const p = await proposalsRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!p) throw missing();
      return proposalJson(p);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/aipromptproposals/:id/accept',
    tag,
    summary: 'Accept a completed proposal: the AI takes its prompt',
    permission: 'manager',
    params: idParams,
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const p = await ownProposal(ctx, auth.customerId, params.id);
      if (p.status !== 'completed') throw stateInvalid(`only a completed proposal can be accepted (this one is ${p.status})`);
      const repo = proposalsRepo(ctx.db);
      const accepted = await repo.transition(p.id, ['completed'], { status: 'accepted' });
      if (!accepted) throw stateInvalid('the proposal changed meanwhile');
      const ai = await aisRepo(ctx.db).update(auth.customerId, p.ai_id, { init_prompt: p.proposed_prompt }, p.id, creatorOf(auth));
      if (!ai) throw notFound('AI_NOT_FOUND', "the proposal's ai no longer exists");
      const done = (await repo.transition(p.id, ['accepted'], { applied_prompt_history_id: ai.current_prompt_history_id })) ?? accepted;
      await publish(ctx, 'ai_updated', aiJson(ai));
      return proposalJson(done);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/aipromptproposals/:id/reject',
    tag,
    summary: 'Reject a completed proposal',
    permission: 'manager',
    params: idParams,
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const p = await ownProposal(ctx, auth.customerId, params.id);
      const r = await proposalsRepo(ctx.db).transition(p.id, ['completed'], { status: 'rejected' });
      if (!r) throw stateInvalid(`only a completed proposal can be rejected (this one is ${p.status})`);
      return proposalJson(r);
    },
  }),
];
