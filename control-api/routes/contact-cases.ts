/**
 * /contact_cases: every case of the customer (managers and admins). Cases are opened by the
 * case_create flow action or by continuing a closed one; agents work theirs through
 * /service_agents/contact_cases.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { ApiError } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { CASE_STATUSES, caseNoteJson, contactCaseJson, contactCasesRepo } from '../../core/repos/contact-cases';
import { conversationMessageJson, conversationsRepo } from '../../core/repos/conversations';
import { sendToConversation } from '../../core/conversations/send';
import { postMessage, sessionOfConversation } from '../../core/webchat/service';
import { messagingDeps } from '../messaging/deps';
import { listOf } from './schemas';
import { conversationMessageSchema } from './conversations';
import { caseNotFound, caseSchema, closeCase, continueCase, contactBody, findCase, noteParams, noteSchema, noteText, setContact } from '../service-agents/cases';

const tag = 'Contact Case';
const pageQuery = { page_size: z.string().optional(), page_token: z.string().optional() };

export const routes = [
  defineRoute({
    method: 'get',
    path: '/contact_cases',
    tag,
    summary: 'List cases',
    permission: 'manager',
    paginated: true,
    query: z.object({
      status: z.enum(CASE_STATUSES).optional(),
      reference_id: uuid().optional(),
      owner_type: z.enum(['', 'agent']).optional(),
      owner_id: uuid().optional(),
      contact_id: uuid().optional(),
      ...pageQuery,
    }),
    response: listOf(caseSchema),
    handler: async ({ ctx, auth, page, query }) => {
      const p = await contactCasesRepo(ctx.db).list(auth.customerId, page, {
        status: query.status,
        reference_id: query.reference_id?.toLowerCase(),
        owner_type: query.owner_type,
        owner_id: query.owner_id?.toLowerCase(),
        contact_id: query.contact_id?.toLowerCase(),
      });
      return { result: p.result.map(contactCaseJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/contact_cases/unresolved',
    tag,
    summary: 'List open cases without an owner',
    permission: 'manager',
    paginated: true,
    query: z.object(pageQuery),
    response: listOf(caseSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await contactCasesRepo(ctx.db).list(auth.customerId, page, { unresolved: true });
      return { result: p.result.map(contactCaseJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/contact_cases/:id',
    tag,
    summary: 'Get a case',
    permission: 'manager',
    params: idParams,
    response: caseSchema,
    handler: async ({ ctx, auth, params }) => contactCaseJson(await findCase(ctx, auth.customerId, params.id)),
  }),
  defineRoute({
    method: 'put',
    path: '/contact_cases/:id',
    tag,
    summary: "Attach or detach a case's contact",
    permission: 'manager',
    params: idParams,
    body: contactBody,
    response: caseSchema,
    handler: async ({ ctx, auth, params, body }) => contactCaseJson(await setContact(ctx, await findCase(ctx, auth.customerId, params.id), body.contact_id)),
  }),
  defineRoute({
    method: 'post',
    path: '/contact_cases/:id/close',
    tag,
    summary: 'Close a case (409 STATE_INVALID when already closed)',
    permission: 'manager',
    params: idParams,
    response: caseSchema,
    handler: async ({ ctx, auth, params }) => {
      const by = auth.kind === 'agent' || auth.kind === 'delegate' ? { type: 'agent' as const, id: auth.agentId } : { type: 'system' as const, id: null };
      return contactCaseJson(await closeCase(ctx, await findCase(ctx, auth.customerId, params.id), by));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/contact_cases/:id/continue',
    tag,
    summary: 'Continue a closed case as a new open case (previous_case_id)',
    permission: 'manager',
    params: idParams,
    response: caseSchema,
    handler: async ({ ctx, auth, params }) => contactCaseJson(await continueCase(ctx, await findCase(ctx, auth.customerId, params.id))),
  }),
  defineRoute({
    method: 'post',
    path: '/contact_cases/:id/messages',
    tag,
    summary: 'Send a message to the party of a case (on its conversation)',
    description:
      'Only cases opened on a conversation can send (409 STATE_INVALID otherwise); the conversation decides source and destination, so source and destination are accepted and must match its addresses when given.',
    permission: 'manager',
    params: idParams,
    body: z.object({ source: z.string().max(255).optional(), destination: z.string().max(255).optional(), text: z.string().min(1).max(4096) }),
    response: conversationMessageSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const c = await findCase(ctx, auth.customerId, params.id);
      if (c.status !== 'open') throw new ApiError('STATE_INVALID', 'the case is closed');
      if (c.reference_type !== 'conversation') throw new ApiError('STATE_INVALID', 'the case was not opened on a conversation');
      const conv = await conversationsRepo(ctx.db).getOwned(auth.customerId, c.reference_id);
      if (!conv) throw new ApiError('STATE_INVALID', "the case's conversation no longer exists");
      if (body.source && body.source !== conv.self.target) throw new ApiError('INVALID_ARGUMENT', "source: not the case's own address", { details: [{ field: 'source', issue: 'mismatch' }] });
      if (body.destination && body.destination !== conv.peer.target)
        throw new ApiError('INVALID_ARGUMENT', "destination: not the case's peer", { details: [{ field: 'destination', issue: 'mismatch' }] });
      const deps = messagingDeps(ctx);
      const session = await sessionOfConversation(deps, conv);
      if (session) {
        const m = await postMessage(deps, session, { direction: 'outbound', text: body.text, sender_id: auth.kind === 'agent' ? auth.agentId : '' });
        if (!m) throw new ApiError('STATE_INVALID', 'the webchat session has ended');
        const [cm] = await conversationsRepo(ctx.db).messagesByReference(m.id);
        if (!cm) throw caseNotFound();
        return conversationMessageJson(cm);
      }
      return conversationMessageJson(await sendToConversation(deps, conv, body.text));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/contact_cases/:id/notes',
    tag,
    summary: 'List notes of a case',
    permission: 'manager',
    params: idParams,
    paginated: true,
    query: z.object(pageQuery),
    response: listOf(noteSchema),
    handler: async ({ ctx, auth, params, page }) => {
      const c = await findCase(ctx, auth.customerId, params.id);
      const p = await contactCasesRepo(ctx.db).listNotes(c.id, page);
      return { result: p.result.map(caseNoteJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/contact_cases/:id/notes',
    tag,
    summary: 'Add a note to a case',
    description: 'author_type agent needs author_id naming an agent of the customer (default: the caller); system notes have no author (the empty UUID is taken as none).',
    permission: 'manager',
    params: idParams,
    body: z.object({ author_type: z.enum(['agent', 'system']).optional(), author_id: uuid().optional(), text: noteText }),
    response: noteSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const c = await findCase(ctx, auth.customerId, params.id);
      const type = body.author_type ?? (auth.kind === 'agent' || auth.kind === 'delegate' ? 'agent' : 'system');
      let author: string | null = null;
      if (type === 'agent') {
        author = (body.author_id ?? (auth.kind === 'agent' || auth.kind === 'delegate' ? auth.agentId : '')).toLowerCase();
        if (!author || !(await ctx.repos.agents.get(author, { customerId: auth.customerId }))) {
          throw new ApiError('INVALID_ARGUMENT', 'author_id: no such agent', { details: [{ field: 'author_id', issue: 'required for agent notes: an agent of this customer' }] });
        }
      } else if (body.author_id && body.author_id.toLowerCase() !== EMPTY_UUID) {
        throw new ApiError('INVALID_ARGUMENT', 'author_id: system notes have no author', { details: [{ field: 'author_id', issue: 'not allowed with author_type system' }] });
      }
      return caseNoteJson(await contactCasesRepo(ctx.db).addNote(c, { type, id: author }, body.text));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/contact_cases/:id/notes/:note_id',
    tag,
    summary: 'Delete a note of a case',
    permission: 'manager',
    params: noteParams,
    response: noteSchema,
    handler: async ({ ctx, auth, params }) => {
      const c = await findCase(ctx, auth.customerId, params.id);
      const n = await contactCasesRepo(ctx.db).deleteNote(c.id, params.note_id.toLowerCase());
      if (!n) throw new ApiError('RESOURCE_NOT_FOUND', 'note not found');
      return caseNoteJson(n);
    },
  }),
];
