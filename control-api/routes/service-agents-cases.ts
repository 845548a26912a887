/**
 * /service_agents/contact_cases: the agent's cases and the open unowned ones it may take. Assign
 * takes a case (owner_id = self) or hands an own case to another agent; notes are written as the
 * agent; only the agent's own notes can be deleted.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid, type AnyRoute } from '../route';
import { ApiError, permissionDenied } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { caseNoteJson, contactCaseJson, contactCasesRepo } from '../../core/repos/contact-cases';
import { paginate, toPage } from '../../core/pagination';
import type { ContactCaseRow } from '../../core/repos/contact-cases';
import { listOf } from './schemas';
import { agentScope, canSeeCase, pageQuery, serviceAgentRoutes } from '../service-agents/scope';
import { assignCase, caseSchema, closeCase, contactBody, findCase, noteParams, noteSchema, noteText, setContact } from '../service-agents/cases';

const defs: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/service_agents/contact_cases',
    tag: 'Service Agent',
    summary: "The agent's cases and the open unowned ones",
    permission: 'agent',
    paginated: true,
    query: z.object({ status: z.enum(['open', 'closed']).optional(), ...pageQuery }),
    response: listOf(caseSchema),
    handler: async ({ ctx, auth, page, query }) => {
      const s = agentScope(auth);
      const q = ctx.db('contact_cases').where({ customer_id: s.customerId }).whereNull('tm_delete').select('*');
      q.where((w) => void w.where({ owner_id: s.agentId }).orWhere((o) => void o.where({ status: 'open', owner_id: EMPTY_UUID })));
      if (query.status) q.where({ status: query.status });
      return toPage(await paginate<ContactCaseRow>(q, page), contactCaseJson);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/contact_cases/:id',
    tag: 'Service Agent',
    summary: 'Get a case',
    permission: 'agent',
    params: idParams,
    response: caseSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = agentScope(auth);
      return contactCaseJson(await findCase(ctx, s.customerId, params.id, (c) => canSeeCase(s, c)));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/service_agents/contact_cases/:id',
    tag: 'Service Agent',
    summary: "Attach or detach a case's contact",
    permission: 'agent',
    params: idParams,
    body: contactBody,
    response: caseSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const s = agentScope(auth);
      const c = await findCase(ctx, s.customerId, params.id, (x) => x.owner_id === s.agentId);
      return contactCaseJson(await setContact(ctx, c, body.contact_id));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/service_agents/contact_cases/:id/assign',
    tag: 'Service Agent',
    summary: 'Assign the case to an owner agent (owner_type is always agent)',
    permission: 'agent',
    params: idParams,
    body: z.object({ owner_id: uuid() }),
    response: caseSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const s = agentScope(auth);
      const c = await findCase(ctx, s.customerId, params.id, (x) => canSeeCase(s, x));
      if (c.owner_id === EMPTY_UUID && body.owner_id.toLowerCase() !== s.agentId) throw permissionDenied('an unowned case can only be taken by the agent itself');
      return contactCaseJson(await assignCase(ctx, c, body.owner_id));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/service_agents/contact_cases/:id/close',
    tag: 'Service Agent',
    summary: 'Close one of the agent’s cases',
    permission: 'agent',
    params: idParams,
    response: caseSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = agentScope(auth);
      const c = await findCase(ctx, s.customerId, params.id, (x) => x.owner_id === s.agentId);
      return contactCaseJson(await closeCase(ctx, c, { type: 'agent', id: s.agentId }));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/contact_cases/:id/notes',
    tag: 'Service Agent',
    summary: 'Notes of a case',
    permission: 'agent',
    params: idParams,
    paginated: true,
    query: z.object(pageQuery),
    response: listOf(noteSchema),
    handler: async ({ ctx, auth, params, page }) => {
      const s = agentScope(auth);
      const c = await findCase(ctx, s.customerId, params.id, (x) => canSeeCase(s, x));
      const p = await contactCasesRepo(ctx.db).listNotes(c.id, page);
      return { result: p.result.map(caseNoteJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/service_agents/contact_cases/:id/notes',
    tag: 'Service Agent',
    summary: 'Add a note to one of the agent’s cases',
    permission: 'agent',
    params: idParams,
    body: z.object({ text: noteText }),
    response: noteSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const s = agentScope(auth);
      const c = await findCase(ctx, s.customerId, params.id, (x) => x.owner_id === s.agentId);
      return caseNoteJson(await contactCasesRepo(ctx.db).addNote(c, { type: 'agent', id: s.agentId }, body.text));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/service_agents/contact_cases/:id/notes/:note_id',
    tag: 'Service Agent',
    summary: 'Delete one of the agent’s own notes',
    permission: 'agent',
    params: noteParams,
    response: noteSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = agentScope(auth);
      const c = await findCase(ctx, s.customerId, params.id, (x) => x.owner_id === s.agentId);
      const repo = contactCasesRepo(ctx.db);
      const n = await repo.getNote(c.id, params.note_id.toLowerCase());
      if (!n || n.author_id !== s.agentId) throw new ApiError('RESOURCE_NOT_FOUND', 'note not found');
      const d = await repo.deleteNote(c.id, n.id);
      if (!d) throw new ApiError('RESOURCE_NOT_FOUND', 'note not found');
      return caseNoteJson(d);
    },
  }),
];

export const routes = serviceAgentRoutes(defs);
