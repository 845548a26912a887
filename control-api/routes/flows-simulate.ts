/**
 * POST /flows/{id}/simulate and POST /flows/simulate (our extension; the reference API has none):
 * the flow simulator (media-app/flow/simulator/) runs a saved flow, or the actions given inline (an
 * unsaved edit), against a scripted virtual call and answers the timeline of what the production
 * runner did. control-api validates the script with the simulator's own schema (core/flow/sim-script.ts),
 * and a media-app node runs it (control-api/simulator.ts, over the shared simulate queue). Nothing is
 * sent over HTTP: fetch and webhook_send get the egress policy's verdict on their URL and the
 * script's `http` answers, and each is written to the timeline as `http_not_sent`.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { ApiError } from '../../core/errors';
import { isUnset, parseActions } from '../../core/flow';
import { simScriptSchema, type SimScript } from '../../core/flow/sim-script';
import { flowJson, flowsRepo } from '../../core/repos/flows';
import type { SimulateJob } from '../../core/commands/simulate';
import type { AppContext } from '../context';
import { runSimulation } from '../simulator';

/** Saved flows a simulation may load (on_complete_flow_id, fetch_flow, on_end_flow_id), script's included. */
const MAX_FLOWS = 20;

const timelineEntry = z
  .object({
    t: z.number().describe('virtual ms since the start'),
    at: z.string().describe('the same instant, RFC 3339 (from start_time)'),
    activeflow_id: z.string(),
    event: z.string().describe('activeflow_created, action (type, option as substituted, index), media (command...), dtmf, digits_received, speech, http_not_sent, call_hangup, activeflow_ended, ...'),
  })
  .catchall(z.unknown());

const resultSchema = z
  .object({
    outcome: z.enum(['done', 'stalled', 'time_limit', 'real_time_limit']).describe('done: every activeflow ended; stalled: waiting on nothing the script does; *_limit: stopped at a bound'),
    duration_ms: z.number().describe('virtual ms at the end'),
    call_id: z.string(),
    timeline: z.array(timelineEntry),
    timeline_truncated: z.boolean().optional().describe('true when the timeline was cut at 2000 entries'),
    activeflows: z.array(z.record(z.string(), z.unknown())).describe('final activeflow records, in the order they started'),
    events: z.array(z.object({ type: z.string(), activeflow_id: z.string(), status: z.string(), current_action: z.string() })),
  })
  .describe('FlowSimulation');

const scriptDoc =
  'Body: the script of the virtual call (events: [{at, dtmf, interval, hangup, stop, continue}], speech: [{at, duration}], ' +
  'variables, start_time, call, media, amd, connect, flows, http: [{url, method, status, body}], limits, max_ms). ' +
  'Bounded by the node: its flow limits, one hour of virtual time, 5 s of real time. ' +
  'No HTTP request is sent: fetch and webhook_send are answered from `http` (or fail as not sent) after the egress policy checks the URL. ' +
  'Waits up to FLOW_SIMULATE_TIMEOUT_MS (10 s) for a media-app node: 503 SERVICE_UNAVAILABLE when none runs, 503 REQUEST_TIMEOUT past the wait; ' +
  'at most 2 simulations of a customer at once (429).';

const inlineBody = simScriptSchema.extend({
  actions: z.array(z.unknown()).max(1000).describe('array of Action, validated like POST /flows'),
  on_complete_flow_id: uuid().optional().describe('a saved flow of the customer run when this one completes'),
});

/** The customer's saved flows the simulated one can reach, breadth first, up to MAX_FLOWS with the script's. */
async function reachableFlows(ctx: AppContext, customerId: string, start: { actions: unknown[]; on_complete_flow_id?: string }, script: SimScript): Promise<NonNullable<SimScript['flows']>> {
  const given = script.flows ?? [];
  const seen = new Set(given.map((f) => f.id));
  const out: NonNullable<SimScript['flows']> = [];
  const queue = refsOf(start);
  while (queue.length > 0 && given.length + out.length < MAX_FLOWS) {
    const id = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const row = await flowsRepo(ctx.db).getOwned(customerId, id);
    if (!row || !row.persist) continue;
    const f = flowJson(row);
    out.push({ id: f.id, actions: f.actions, on_complete_flow_id: f.on_complete_flow_id });
    queue.push(...refsOf(f));
  }
  return [...given, ...out];
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function refsOf(f: { actions: unknown[]; on_complete_flow_id?: string }): string[] {
  const ids = [f.on_complete_flow_id];
  for (const a of f.actions) {
    const o = (a as { option?: Record<string, unknown> })?.option;
    if (o) ids.push(...['flow_id', 'on_end_flow_id'].map((k) => (typeof o[k] === 'string' ? (o[k] as string) : undefined)));
  }
  return ids.filter((id): id is string => typeof id === 'string' && UUID_RE.test(id) && !isUnset(id));
}

async function simulateFor(ctx: AppContext, customerId: string, flow: SimulateJob['flow'], script: SimScript) {
  const flows = await reachableFlows(ctx, customerId, flow, script);
  return runSimulation(ctx, customerId, flow, { ...script, ...(flows.length ? { flows } : {}) });
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/flows/simulate',
    tag: 'Flow',
    summary: 'Simulate unsaved actions against a scripted virtual call (extension)',
    description: `The flow given inline (actions, on_complete_flow_id) runs on the production flow runner against a virtual call. ${scriptDoc}`,
    permission: 'manager',
    body: inlineBody,
    response: resultSchema,
    handler: async ({ ctx, auth, body }) => {
      const { actions, on_complete_flow_id, ...script } = body;
      const checked = parseActions(actions, { egress: ctx.egress });
      if (on_complete_flow_id && !isUnset(on_complete_flow_id)) {
        const target = await flowsRepo(ctx.db).getOwned(auth.customerId, on_complete_flow_id);
        if (!target || !target.persist)
          throw new ApiError('INVALID_ARGUMENT', 'on_complete_flow_id: no flow with this id', { details: [{ field: 'on_complete_flow_id', issue: 'no flow with this id' }] });
      }
      return simulateFor(ctx, auth.customerId, { actions: checked, on_complete_flow_id }, script);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/flows/:id/simulate',
    tag: 'Flow',
    summary: 'Simulate a saved flow against a scripted virtual call (extension)',
    description: `The saved flow runs on the production flow runner against a virtual call. ${scriptDoc}`,
    permission: 'manager',
    params: idParams,
    body: simScriptSchema,
    response: resultSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const row = await flowsRepo(ctx.db).getOwned(auth.customerId, params.id);
      if (!row || !row.persist) throw new ApiError('FLOW_NOT_FOUND', 'flow not found');
      const f = flowJson(row);
      return simulateFor(ctx, auth.customerId, { id: f.id, actions: f.actions, on_complete_flow_id: f.on_complete_flow_id }, body);
    },
  }),
];
