/**
 * /summaries (and /aisummaries, the same records): summaries of a call's, conference's,
 * transcribe's or recording's transcripts through the LLM interface. Created progressing, done in
 * the background; regenerate (recordings only) replaces the content in place, a failure keeps it.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { ApiError, invalidArgument, notFound, serviceUnavailable, stateInvalid } from '../../core/errors';
import { summariesRepo, summaryJson, summaryReferenceExists, type SummaryRow } from '../../core/repos/summaries';
import { generateSummary, summaryLlm } from '../../core/ai/summary';
import { LlmError } from '../../core/llm/client';
import { eventsOf, listOfShape, publish, shape } from '../../core/ai/api';
import type { AppContext } from '../context';
import { flowsRepo } from '../../core/repos/flows';
import { EMPTY_UUID } from '../../core/ids';
import { startSummaryFlow } from '../../core/speech/summary-flow';
import { commandBus } from '../calls/bus';
import { transcribeWavFile } from '../../media-engine';

const FIELDS = ['id', 'customer_id', 'activeflow_id', 'on_end_flow_id', 'reference_type', 'reference_id', 'status', 'language', 'content', 'tm_create', 'tm_update', 'tm_delete'];
const missing = () => new ApiError('RESOURCE_NOT_FOUND', 'summary not found');
const language = z
  .string()
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a BCP47 tag')
  .max(35);

function llmReady(): void {
  try {
    summaryLlm();
  } catch (e) {
    if (e instanceof LlmError) throw serviceUnavailable(e.message);
    throw e;
  }
}

const deps = (ctx: AppContext) => ({ db: ctx.db, events: eventsOf(ctx), dataDir: ctx.config.dataDir, egress: ctx.egress, transcribeFile: transcribeWavFile });

/** Generates the summary, then runs its on_end_flow_id (core/speech/summary-flow.ts). */
async function generateThenFlow(ctx: AppContext, s: SummaryRow, regenerate = false): Promise<SummaryRow> {
  const done = await generateSummary(deps(ctx), s, regenerate);
  await startSummaryFlow(ctx.db, commandBus(ctx), done).catch((err: Error) => ctx.logger.warn({ err: err.message, summary: s.id }, 'on_end_flow_id did not start'));
  return done;
}

export function summaryRoutes(base: '/summaries' | '/aisummaries', tag: string) {
  return [
    defineRoute({
      method: 'post',
      path: base,
      tag,
      summary: 'Summarise a call, conference, transcribe or recording',
      permission: 'manager',
      body: z.object({
        reference_type: z.enum(['call', 'conference', 'transcribe', 'recording']),
        reference_id: uuid(),
        language: language.optional(),
        on_end_flow_id: z.union([z.literal(''), uuid()]).optional(),
      }),
      response: shape(FIELDS),
      handler: async ({ ctx, auth, body }) => {
        if (!(await summaryReferenceExists(ctx.db, auth.customerId, body.reference_type, body.reference_id)))
          throw notFound('RESOURCE_NOT_FOUND', `${body.reference_type} ${body.reference_id} not found`);
        // '' and the nil UUID mean none (voipbin clients send either)
        const onEnd = body.on_end_flow_id && body.on_end_flow_id !== EMPTY_UUID ? body.on_end_flow_id : null;
        if (onEnd && !(await flowsRepo(ctx.db).getOwned(auth.customerId, onEnd))) {
          throw new ApiError('FLOW_NOT_FOUND', 'on_end_flow_id: flow not found', { details: [{ field: 'on_end_flow_id' }] });
        }
        llmReady();
        const s = await summariesRepo(ctx.db).create(auth.customerId, {
          reference_type: body.reference_type,
          reference_id: body.reference_id,
          language: body.language || 'en-US',
          on_end_flow_id: onEnd,
        });
        const json = summaryJson(s);
        await publish(ctx, 'summary_created', json);
        void generateThenFlow(ctx, s).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'summary failed'));
        return json;
      },
    }),
    defineRoute({
      method: 'get',
      path: base,
      tag,
      summary: 'List summaries',
      permission: 'agent',
      paginated: true,
      response: listOfShape(FIELDS),
      handler: async ({ ctx, auth, page }) => {
        const p = await summariesRepo(ctx.db).list(auth.customerId, page);
        return { result: p.result.map(summaryJson), next_page_token: p.next_page_token };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${base}/:id`,
      tag,
      summary: 'Get a summary',
      permission: 'agent',
      params: idParams,
      response: shape(FIELDS),
      handler: async ({ ctx, auth, params }) => {
        const s = await summariesRepo(ctx.db).get(auth.customerId, params.id);
        if (!s) throw missing();
        return summaryJson(s);
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${base}/:id`,
      tag,
      summary: 'Delete a summary',
      permission: 'manager',
      params: idParams,
      response: shape(FIELDS),
      handler: async ({ ctx, auth, params }) => {
        const s = await summariesRepo(ctx.db).softDelete(auth.customerId, params.id);
        if (!s) throw missing();
        const json = summaryJson(s);
        await publish(ctx, 'summary_deleted', json);
        return json;
      },
    }),
    defineRoute({
      method: 'post',
      path: `${base}/:id/regenerate`,
      tag,
      summary: 'Regenerate a summary (recording references only)',
      permission: 'manager',
      params: idParams,
      body: z.object({ language: language.optional() }),
      response: shape(FIELDS),
      handler: async ({ ctx, auth, params, body }) => {
        const repo = summariesRepo(ctx.db);
        let s = await repo.get(auth.customerId, params.id);
        if (!s) throw missing();
        if (s.reference_type !== 'recording') throw invalidArgument('only summaries of recordings can be regenerated', [{ field: 'reference_type', issue: 'not recording' }]);
        if (s.status !== 'done') throw stateInvalid('the summary is still being generated');
        llmReady();
        if (body?.language && body.language !== s.language) s = (await repo.update(s.id, { language: body.language })) ?? s;
        return summaryJson(await generateThenFlow(ctx, s, true));
      },
    }),
  ];
}

export const routes = summaryRoutes('/summaries', 'Summary');
