/**
 * The creation routes of the service-agent group: POST /service_agents/aicalls, /aimessages and
 * /transcribes. They behave as the customer's POST /aicalls, /aimessages and /transcribes, on what
 * the agent may reach (control-api/service-agents/scope.ts); anything else answers not found.
 *   aicalls      on the agent's conversations and contact cases (reference_id required); a contact
 *                case's assistant without assistance_id is the customer's Insight AI (the active one,
 *                else the newest)
 *   aimessages   into an AI call on the agent's calls, conversations or contact cases
 *   transcribes  of the agent's live calls and of their recordings (no conferences)
 */
import { z } from 'zod';
import { defineRoute, uuid, type AnyRoute } from '../route';
import { invalidArgument, notFound } from '../../core/errors';
import { aicallJson, aicallsRepo, aimessageJson, type AicallRow } from '../../core/repos/ai-calls';
import { aisRepo } from '../../core/repos/ais';
import { callsRepo } from '../../core/repos/calls';
import { contactCasesRepo } from '../../core/repos/contact-cases';
import { conversationsRepo } from '../../core/repos/conversations';
import { transcribeJson } from '../../core/repos/transcribes';
import { shape } from '../../core/ai/api';
import type { AppContext } from '../context';
import { agentScope, canSeeCall, canSeeCase, canSeeConversation, serviceAgentRoutes, type AgentScope } from '../service-agents/scope';
import { startTranscribe, transcribeBody, type Reachable } from '../transcribes/start';
import { AICALL_FIELDS, startAicall } from './aicalls';
import { addAimessage, aimessageBody, AIMESSAGE_FIELDS } from './aimessages';
import { transcribeSchema } from './transcribes';

/** Whether the agent reaches what an AI call is about (its conversation, contact case or call). */
async function reaches(ctx: AppContext, s: AgentScope, type: string, id: string): Promise<boolean> {
  if (!id) return false;
  if (type === 'conversation') {
    const c = await conversationsRepo(ctx.db).getOwned(s.customerId, id);
    return !!c && canSeeConversation(s, c);
  }
  if (type === 'contact_case' || type === 'task') {
    const c = await contactCasesRepo(ctx.db).get(s.customerId, id);
    return !!c && canSeeCase(s, c);
  }
  if (type === 'call') {
    const c = await callsRepo(ctx.db).getOwned(s.customerId, id);
    return !!c && canSeeCall(s, c);
  }
  return false;
}

function reachableBy(ctx: AppContext, s: AgentScope): Reachable {
  return { call: (c) => canSeeCall(s, c), recordingOf: async (type, id) => type === 'call' && reaches(ctx, s, 'call', id), confbridge: false };
}

const aicallBody = z.object({
  assistance_type: z.enum(['ai', 'team']),
  assistance_id: uuid().optional().describe("optional for assistance_type ai on a contact_case: the customer's Insight AI"),
  reference_type: z.enum(['', 'call', 'conversation', 'task', 'contact_case']),
  reference_id: uuid(),
});

const defs: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/service_agents/aicalls',
    tag: 'Service Agent',
    summary: "Start a text AI session on one of the agent's conversations or contact cases",
    permission: 'agent',
    body: aicallBody,
    response: shape(AICALL_FIELDS),
    handler: async ({ ctx, auth, body }) => {
      const s = agentScope(auth);
      if (body.reference_type !== 'conversation' && body.reference_type !== 'contact_case') {
        throw invalidArgument("reference_type: a service agent starts AI calls on its conversations or contact cases (a call's voice session starts with ai_talk)", [
          { field: 'reference_type', issue: 'conversation or contact_case' },
        ]);
      }
      if (!(await reaches(ctx, s, body.reference_type, body.reference_id))) throw notFound('RESOURCE_NOT_FOUND', `${body.reference_type} not found`);
      let assistanceId = body.assistance_id;
      if (!assistanceId) {
        if (body.assistance_type !== 'ai' || body.reference_type !== 'contact_case') throw invalidArgument('assistance_id is required', [{ field: 'assistance_id', issue: 'required' }]);
        const insight = await aisRepo(ctx.db).insightFor(s.customerId);
        if (!insight) throw notFound('AI_NOT_FOUND', 'the customer has no Insight AI to assist the case');
        assistanceId = insight.id;
      }
      return aicallJson(await startAicall(ctx, s.customerId, { ...body, assistance_id: assistanceId }));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/service_agents/aimessages',
    tag: 'Service Agent',
    summary: "Add a message to an AI call on the agent's conversations, contact cases or calls",
    permission: 'agent',
    body: aimessageBody,
    response: shape(AIMESSAGE_FIELDS),
    handler: async ({ ctx, auth, body }) => {
      const s = agentScope(auth);
      const c: AicallRow | null = await aicallsRepo(ctx.db).get(s.customerId, body.aicall_id);
      if (!c || !(await reaches(ctx, s, c.reference_type, c.reference_id ?? ''))) throw notFound('RESOURCE_NOT_FOUND', 'aicall not found');
      return aimessageJson(await addAimessage(ctx, c, body));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/service_agents/transcribes',
    tag: 'Service Agent',
    summary: "Transcribe one of the agent's live calls, or a recording of one",
    permission: 'agent',
    body: transcribeBody,
    response: transcribeSchema,
    handler: async ({ ctx, auth, body }) => {
      const s = agentScope(auth);
      return transcribeJson(await startTranscribe(ctx, s.customerId, body, reachableBy(ctx, s)));
    },
  }),
];

export const routes = serviceAgentRoutes(defs);
