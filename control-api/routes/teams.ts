/** /teams: several AIs as a graph; a member hands the conversation on by calling a transition function. */
import { z } from 'zod';
import { defineRoute, idParams, text, uuid } from '../route';
import { invalidArgument, notFound } from '../../core/errors';
import { aisRepo } from '../../core/repos/ais';
import { teamJson, teamsRepo, type TeamInput, type TeamMember } from '../../core/repos/teams';
import { API_TOOL_NAMES } from '../../core/ai/tools';
import { listOfShape, publish, shape } from '../../core/ai/api';
import type { AppContext } from '../context';

const FIELDS = ['id', 'customer_id', 'name', 'detail', 'start_member_id', 'members', 'parameter', 'direct_hash', 'tm_create', 'tm_update', 'tm_delete'];
const tag = 'Team';
const missing = () => notFound('RESOURCE_NOT_FOUND', 'team not found');

const member = z
  .object({
    id: uuid(),
    name: z.string().trim().min(1).max(255),
    ai_id: uuid(),
    transitions: z
      .array(z.object({ function_name: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/, 'must be a function name'), description: text(1024), next_member_id: uuid() }).strict())
      .max(50)
      .optional(),
  })
  .strict();
const body = {
  detail: text(2048).optional(),
  start_member_id: uuid(),
  members: z.array(member).min(1, 'must contain at least one member').max(50),
  parameter: z.record(z.string(), z.unknown()).optional(),
};
const createBody = z.object({ name: z.string().trim().min(1).max(255), ...body });
const updateBody = z.object({ name: z.string().trim().min(1).max(255).optional(), ...body, start_member_id: uuid().optional(), members: body.members.optional() });

/** The graph must hold together: known start, unique members, existing AIs, transitions to members, no reserved names. */
async function checkGraph(ctx: AppContext, customerId: string, start: string, members: TeamMember[]): Promise<void> {
  const ids = new Set(members.map((m) => m.id));
  if (ids.size !== members.length) throw invalidArgument('members: member ids must be unique', [{ field: 'members', issue: 'duplicate id' }]);
  if (!ids.has(start)) throw invalidArgument('start_member_id: must be one of the members', [{ field: 'start_member_id', issue: 'not a member' }]);
  for (const [i, m] of members.entries()) {
    if (!(await aisRepo(ctx.db).get(customerId, m.ai_id))) throw invalidArgument(`members.${i}.ai_id: no such ai`, [{ field: `members.${i}.ai_id`, issue: 'not found' }]);
    for (const [j, t] of m.transitions.entries()) {
      if (!ids.has(t.next_member_id))
        throw invalidArgument(`members.${i}.transitions.${j}.next_member_id: not a member`, [{ field: `members.${i}.transitions.${j}.next_member_id`, issue: 'not a member' }]);
      if ((API_TOOL_NAMES as readonly string[]).includes(t.function_name))
        throw invalidArgument(`members.${i}.transitions.${j}.function_name: reserved tool name`, [{ field: `members.${i}.transitions.${j}.function_name`, issue: 'reserved' }]);
    }
  }
}

const norm = (ms: z.infer<typeof member>[]): TeamMember[] => ms.map((m) => ({ ...m, transitions: m.transitions ?? [] }));

export const routes = [
  defineRoute({
    method: 'post',
    path: '/teams',
    tag,
    summary: 'Create a team',
    permission: 'manager',
    body: createBody,
    response: shape(FIELDS),
    handler: async ({ ctx, auth, body: b }) => {
      const members = norm(b.members);
      await checkGraph(ctx, auth.customerId, b.start_member_id, members);
      const t = await teamsRepo(ctx.db).create(auth.customerId, { name: b.name, detail: b.detail ?? '', start_member_id: b.start_member_id, members, parameter: b.parameter ?? {} });
      const json = teamJson(t);
      await publish(ctx, 'team_created', json);
      return json;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/teams',
    tag,
    summary: 'List teams',
    permission: 'agent',
    paginated: true,
    response: listOfShape(FIELDS),
    handler: async ({ ctx, auth, page }) => {
      const p = await teamsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(teamJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/teams/:id',
    tag,
    summary: 'Get a team',
    permission: 'agent',
    params: idParams,
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const t = await teamsRepo(ctx.db).get(auth.customerId, params.id);
      if (!t) throw missing();
      return teamJson(t);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/teams/:id',
    tag,
    summary: 'Update a team',
    permission: 'manager',
    params: idParams,
    body: updateBody,
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params, body: b }) => {
      const repo = teamsRepo(ctx.db);
      const cur = await repo.get(auth.customerId, params.id);
      if (!cur) throw missing();
      const members = b.members ? norm(b.members) : cur.members;
      await checkGraph(ctx, auth.customerId, b.start_member_id ?? cur.start_member_id, members);
      const patch: TeamInput = { ...b, members: b.members ? members : undefined } as TeamInput;
      const t = await repo.update(auth.customerId, params.id, Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)));
      if (!t) throw missing();
      const json = teamJson(t);
      await publish(ctx, 'team_updated', json);
      return json;
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/teams/:id',
    tag,
    summary: 'Delete a team',
    permission: 'manager',
    params: idParams,
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const t = await teamsRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!t) throw missing();
      const json = teamJson(t);
      await publish(ctx, 'team_deleted', json);
      return json;
    },
  }),
  ...['/teams/:id/direct_hash_regenerate', '/teams/:id/direct-hash-regenerate'].map((path) =>
    defineRoute({
      method: 'post',
      path,
      tag,
      summary: 'Regenerate the direct hash of a team',
      permission: 'manager',
      params: idParams,
      response: shape(FIELDS),
      handler: async ({ ctx, auth, params }) => {
        const t = await teamsRepo(ctx.db).regenerateDirectHash(auth.customerId, params.id);
        if (!t) throw missing();
        return teamJson(t);
      },
    }),
  ),
];
