/**
 * /timeline-analyses: an LLM's verdict on an ended activeflow (core/timeline/analysis.ts). POST
 * answers 200 with the progressing record (or the activeflow's existing record, unchanged, unless
 * `reanalyze`); the analysis finishes in the background, completed with `result` or failed with
 * `error`. Reanalysis waits REANALYZE_COOLDOWN_S after the last one (429 otherwise).
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { ApiError, notFound, rateLimited, serviceUnavailable, stateInvalid } from '../../core/errors';
import { clock } from '../../core/clock';
import { summaryLlm } from '../../core/ai/summary';
import { LlmError } from '../../core/llm/client';
import { listOfShape, shape } from '../../core/ai/api';
import { timelineAnalysesRepo, timelineAnalysisJson, type TimelineAnalysisRow } from '../../core/repos/timeline-analyses';
import { runAnalysis } from '../../core/timeline/analysis';
import type { AppContext } from '../context';
import { activeflowStatusOf } from '../../core/repos/activeflows';

const FIELDS = ['id', 'customer_id', 'activeflow_id', 'status', 'result', 'error', 'tm_create', 'tm_update'];
const tag = 'Timeline';
export const REANALYZE_COOLDOWN_S = 10;
const missing = () => notFound('RESOURCE_NOT_FOUND', 'timeline analysis not found');

function start(ctx: AppContext, a: TimelineAnalysisRow): void {
  void runAnalysis({ db: ctx.db, egress: ctx.egress }, a).catch((err: Error) => ctx.logger.warn({ err: err.message, analysis: a.id }, 'timeline analysis did not finish'));
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/timeline-analyses',
    tag,
    permission: 'manager',
    summary: 'Analyse an ended activeflow with the LLM (the progressing record, or the existing one)',
    description: 'The activeflow must be ended (409 STATE_INVALID otherwise). 503 when no LLM is configured; 429 when reanalysed within ' + `${REANALYZE_COOLDOWN_S} s of the last analysis.`,
    body: z.object({ activeflow_id: uuid(), reanalyze: z.boolean().optional() }),
    response: shape(FIELDS),
    handler: async ({ ctx, auth, body }) => {
      const status = await activeflowStatusOf(ctx.db, auth.customerId, body.activeflow_id);
      if (status === undefined) throw new ApiError('ACTIVEFLOW_NOT_FOUND', 'activeflow not found');
      if (status !== 'ended') throw stateInvalid(`the activeflow is ${status || 'not started'}: only an ended activeflow is analysed`);
      try {
        summaryLlm(process.env, ctx.egress);
      } catch (e) {
        if (e instanceof LlmError) throw serviceUnavailable(e.message);
        throw e;
      }
      const repo = timelineAnalysesRepo(ctx.db);
      const { row, created } = await repo.open(auth.customerId, body.activeflow_id);
      if (created) {
        start(ctx, row);
        return timelineAnalysisJson(row);
      }
      if (!body.reanalyze || row.status === 'progressing') return timelineAnalysisJson(row);
      const since = (clock.now().getTime() - (row.tm_update ?? row.tm_create).getTime()) / 1000;
      if (since < REANALYZE_COOLDOWN_S) throw rateLimited('customer', REANALYZE_COOLDOWN_S - since);
      const again = await repo.restart(row.id);
      if (!again) return timelineAnalysisJson((await repo.get(auth.customerId, row.id)) ?? row);
      start(ctx, again);
      return timelineAnalysisJson(again);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/timeline-analyses',
    tag,
    summary: 'List timeline analyses',
    permission: 'agent',
    paginated: true,
    query: z.object({ activeflow_id: uuid().optional(), status: z.enum(['progressing', 'completed', 'failed']).optional() }),
    response: listOfShape(FIELDS),
    handler: async ({ ctx, auth, page, query }) => {
      const p = await timelineAnalysesRepo(ctx.db).list(auth.customerId, page, { activeflowId: query.activeflow_id, status: query.status });
      return { result: p.result.map(timelineAnalysisJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/timeline-analyses/:id',
    tag,
    summary: 'Get a timeline analysis',
    permission: 'agent',
    params: idParams,
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const a = await timelineAnalysesRepo(ctx.db).get(auth.customerId, params.id);
      if (!a) throw missing();
      return timelineAnalysisJson(a);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/timeline-analyses/:id',
    tag,
    summary: 'Delete a timeline analysis (hard delete; the activeflow may be analysed again)',
    permission: 'manager',
    params: idParams,
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const a = await timelineAnalysesRepo(ctx.db).remove(auth.customerId, params.id);
      if (!a) throw missing();
      return timelineAnalysisJson(a);
    },
  }),
];
