/**
 * /agents: the people who log in and who queues ring. Admins create and delete agents and set
 * permissions; managers edit them (addresses, tags, status); an agent may set its own status and
 * password. ringing is the queue's to set; a person chooses available, away, busy or offline.
 */
import { z } from 'zod';
import { defineRoute, idParams, text, uuid } from '../route';
import type { AppContext, AuthContext } from '../context';
import { alreadyExists, invalidArgument, notFound, permissionDenied } from '../../core/errors';
import { EventPublisher, eventPublisher } from '../../core/events/bus';
import { WebSipCredentials } from '../../core/workspace/web-sip-credentials';
import { hasLevel, isProjectSuperAdmin, Permission } from '../../core/permissions';
import { agentJson, agentsRepo, AGENT_STATUSES, RING_METHODS, type AgentRow, type AgentStatus } from '../../core/repos/agents';
import { agentAddresses } from '../../core/agents/addresses';
import { checkTagIds } from '../../core/agents/tags';
import { publishAgent, setAgentStatus } from '../../core/agents/status';
import { generateDirectHash } from '../../core/extensions/credentials';
import { PASSWORD_MIN_LENGTH } from '../auth/schemas';
import { publishRecheck } from '../ws/guard';
import { sessionsRevoked } from '../middleware/session-revoke';
import { agentSchema, listOf } from './schemas';

const tag = 'Agent';
const missing = () => notFound('RESOURCE_NOT_FOUND', 'agent not found');
const PERMISSIONS = Object.values(Permission) as number[];
const permission = z
  .number()
  .int()
  .refine((n) => PERMISSIONS.includes(n), { message: `one of ${PERMISSIONS.join(', ')}` });
const password = z.string().min(PASSWORD_MIN_LENGTH).max(1024);
const tagIds = z.array(uuid()).max(64);
const SETTABLE_STATUSES = ['available', 'away', 'busy', 'offline'] as const;

function publisher(ctx: AppContext): EventPublisher {
  return eventPublisher(ctx);
}

async function owned(ctx: AppContext, auth: AuthContext, id: string): Promise<AgentRow> {
  const a = await agentsRepo(ctx.db).get(id.toLowerCase(), { customerId: auth.customerId });
  if (!a) throw missing();
  return a;
}

/** Only a project super admin may hand out ProjectSuperAdmin bits. */
function checkGrant(auth: AuthContext, mask: number): void {
  if ((mask & Permission.ProjectSuperAdmin) !== 0 && !isProjectSuperAdmin(auth.permission)) throw permissionDenied('only a project super admin may grant that permission');
}

function isSelf(auth: AuthContext, id: string): boolean {
  return (auth.kind === 'agent' || auth.kind === 'delegate') && auth.agentId === id.toLowerCase();
}

async function changed(ctx: AppContext, row: AgentRow | null, type: 'agent_updated' | 'agent_deleted' = 'agent_updated') {
  if (!row) throw missing();
  await publishAgent(publisher(ctx), type, row);
  return agentJson(row);
}

function uniqueViolation(e: unknown): boolean {
  return (e as { code?: string }).code === '23505';
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/agents',
    tag,
    summary: 'Create an agent',
    permission: 'admin',
    status: 201,
    body: z.object({
      username: z.string().trim().min(1).max(320),
      password,
      name: text().optional(),
      detail: text(1024).optional(),
      ring_method: z.enum(RING_METHODS).optional().describe('default ringall'),
      permission: permission.optional().describe('default 16 (CustomerAgent)'),
      tag_ids: tagIds.optional(),
      addresses: agentAddresses.optional(),
    }),
    response: agentSchema,
    handler: async ({ ctx, auth, body }) => {
      const mask = body.permission ?? Permission.CustomerAgent;
      checkGrant(auth, mask);
      const tags = await checkTagIds(ctx.db, auth.customerId, body.tag_ids ?? []);
      let row: AgentRow;
      try {
        row = await agentsRepo(ctx.db).create({
          customer_id: auth.customerId,
          username: body.username,
          password: body.password,
          name: body.name ?? '',
          detail: body.detail ?? '',
          ring_method: body.ring_method ?? 'ringall',
          status: 'offline',
          permission: mask,
          tag_ids: tags,
          addresses: body.addresses ?? [],
          direct_hash: generateDirectHash(),
        });
      } catch (e) {
        if (uniqueViolation(e)) throw alreadyExists('an agent with this username exists');
        throw e;
      }
      await publishAgent(publisher(ctx), 'agent_created', row);
      return agentJson(row);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/agents',
    tag,
    summary: 'List agents',
    permission: 'agent',
    paginated: true,
    query: z.object({
      tag_ids: z.string().max(4000).optional().describe('comma-separated tag ids: agents holding all of them'),
      status: z.enum(AGENT_STATUSES).optional(),
    }),
    response: listOf(agentSchema),
    handler: async ({ ctx, auth, page, query }) => {
      const ids = (query.tag_ids ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      for (const id of ids) if (!z.guid().safeParse(id).success) throw invalidArgument(`tag_ids: ${id} is not a UUID`, [{ field: 'tag_ids' }]);
      const p = await agentsRepo(ctx.db).listByCustomer(auth.customerId, page, { status: query.status, tagIds: ids.map((s) => s.toLowerCase()) });
      return { result: p.result.map(agentJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/agents/:id',
    tag,
    summary: 'Get an agent',
    permission: 'agent',
    params: idParams,
    response: agentSchema,
    handler: async ({ ctx, auth, params }) => agentJson(await owned(ctx, auth, params.id)),
  }),
  defineRoute({
    method: 'put',
    path: '/agents/:id',
    tag,
    summary: 'Update an agent (name, detail, ring_method)',
    permission: 'manager',
    params: idParams,
    body: z.object({ name: text().optional(), detail: text(1024).optional(), ring_method: z.enum(RING_METHODS).optional() }),
    response: agentSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const a = await owned(ctx, auth, params.id);
      return changed(ctx, await agentsRepo(ctx.db).update(a.id, body));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/agents/:id',
    tag,
    summary: 'Delete an agent (soft)',
    permission: 'admin',
    params: idParams,
    response: agentSchema,
    handler: async ({ ctx, auth, params }) => {
      const a = await owned(ctx, auth, params.id);
      const out = await changed(ctx, await agentsRepo(ctx.db).softDelete(a.id), 'agent_deleted');
      await publishRecheck(ctx, a.customer_id); // the agent's open sockets close now
      await new WebSipCredentials(ctx.redis, ctx.config.redisKeyPrefix).revokeAgent(a.id); // and its browser phone credentials
      return out;
    },
  }),
  defineRoute({
    method: 'put',
    path: '/agents/:id/addresses',
    tag,
    summary: "Replace an agent's addresses",
    permission: 'manager',
    params: idParams,
    body: z.object({ addresses: agentAddresses }),
    response: agentSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const a = await owned(ctx, auth, params.id);
      return changed(ctx, await agentsRepo(ctx.db).update(a.id, { addresses: body.addresses }));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/agents/:id/tag_ids',
    tag,
    summary: "Replace an agent's tags",
    permission: 'manager',
    params: idParams,
    body: z.object({ tag_ids: tagIds }),
    response: agentSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const a = await owned(ctx, auth, params.id);
      const tags = await checkTagIds(ctx.db, auth.customerId, body.tag_ids);
      return changed(ctx, await agentsRepo(ctx.db).update(a.id, { tag_ids: tags }));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/agents/:id/permission',
    tag,
    summary: "Set an agent's permission",
    permission: 'admin',
    params: idParams,
    body: z.object({ permission }),
    response: agentSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const a = await owned(ctx, auth, params.id);
      checkGrant(auth, body.permission);
      const row = await agentsRepo(ctx.db).update(a.id, { permission: body.permission });
      await publishRecheck(ctx, a.customer_id); // the agent's open sockets were admitted with the old permission
      return changed(ctx, row);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/agents/:id/status',
    tag,
    summary: "Set an agent's status",
    permission: 'agent',
    params: idParams,
    description: "available, away, busy or offline; an agent may set its own, a manager anyone's. ringing is set by queues only.",
    body: z.object({ status: z.enum(SETTABLE_STATUSES) }),
    response: agentSchema,
    handler: async ({ ctx, auth, params, body }) => {
      if (!isSelf(auth, params.id) && !hasLevel(auth.permission, 'manager')) throw permissionDenied();
      const a = await owned(ctx, auth, params.id);
      const row = await setAgentStatus(ctx.db, publisher(ctx), a.id, body.status as AgentStatus);
      return agentJson(row ?? a);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/agents/:id/password',
    tag,
    summary: "Set an agent's password",
    permission: 'agent',
    params: idParams,
    body: z.object({ password }),
    response: agentSchema,
    handler: async ({ ctx, auth, params, body }) => {
      if (!isSelf(auth, params.id) && !hasLevel(auth.permission, 'admin')) throw permissionDenied();
      const a = await owned(ctx, auth, params.id);
      const row = await agentsRepo(ctx.db).update(a.id, { password: body.password });
      await sessionsRevoked(ctx, a.customer_id); // the repo retired the agent's sessions with the old password
      return changed(ctx, row);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/agents/:id/direct-hash-regenerate',
    tag,
    summary: "Regenerate an agent's direct hash",
    permission: 'manager',
    params: idParams,
    response: agentSchema,
    handler: async ({ ctx, auth, params }) => {
      const a = await owned(ctx, auth, params.id);
      return changed(ctx, await agentsRepo(ctx.db).update(a.id, { direct_hash: generateDirectHash() }));
    },
  }),
];
