/**
 * /aiaudits: an LLM's evaluation of each AI participant of a finished AI call (core/ai/audit.ts).
 * POST answers 202 with one progressing audit per participant; each ends completed (overall_score,
 * evaluation, message_ids) or failed (error) in the background.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { notFound, serviceUnavailable, stateInvalid } from '../../core/errors';
import { aicallsRepo } from '../../core/repos/ai-calls';
import { aisRepo } from '../../core/repos/ais';
import { aiAuditJson, aiAuditsRepo } from '../../core/repos/ai-audits';
import { runAudit } from '../../core/ai/audit';
import { summaryLlm } from '../../core/ai/summary';
import { LlmError } from '../../core/llm/client';
import { listOfShape, shape } from '../../core/ai/api';

const FIELDS = ['id', 'customer_id', 'aicall_id', 'ai_id', 'prompt_history_id', 'status', 'overall_score', 'evaluation', 'message_ids', 'language', 'error', 'tm_create', 'tm_update', 'tm_delete'];
const tag = 'AI';
const missing = () => notFound('RESOURCE_NOT_FOUND', 'aiaudit not found');
const language = z
  .string()
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a BCP47 tag')
  .max(35);

export const routes = [
  defineRoute({
    method: 'post',
    path: '/aiaudits',
    tag,
    summary: 'Audit each AI participant of a finished AI call (202; done in the background)',
    permission: 'manager',
    status: 202,
    description: "The AI call must be terminated (409 STATE_INVALID otherwise). language defaults to the call's stt_language or en-US. 503 when no LLM is configured.",
    body: z.object({ aicall_id: uuid(), language: language.optional() }),
    response: z.object({ result: z.array(shape(FIELDS)) }),
    handler: async ({ ctx, auth, body }) => {
      const calls = aicallsRepo(ctx.db);
      const call = await calls.get(auth.customerId, body.aicall_id);
      if (!call) throw notFound('RESOURCE_NOT_FOUND', 'aicall not found');
      if (call.status !== 'terminated') throw stateInvalid(`the AI call is ${call.status}: only a terminated call is audited`);
      try {
        summaryLlm(process.env, ctx.egress);
      } catch (e) {
        if (e instanceof LlmError) throw serviceUnavailable(e.message);
        throw e;
      }
      const who = await calls.participants(auth.customerId, { aicallId: call.id }, { pageSize: 100, pageToken: '' });
      if (who.result.length === 0) throw stateInvalid('no AI took part in this call');
      const repo = aiAuditsRepo(ctx.db);
      const audits = [];
      for (const p of who.result) {
        const ai = await aisRepo(ctx.db).get(auth.customerId, p.ai_id);
        audits.push(
          await repo.create(auth.customerId, {
            aicall_id: call.id,
            ai_id: p.ai_id,
            prompt_history_id: ai?.current_prompt_history_id ?? null,
            language: body.language ?? (call.stt_language || 'en-US'),
          }),
        );
      }
      for (const a of audits) {
        void runAudit({ db: ctx.db, egress: ctx.egress }, a).catch((err: Error) => ctx.logger.warn({ err: err.message, aiaudit: a.id }, 'ai audit did not finish'));
      }
      return { result: audits.map(aiAuditJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/aiaudits',
    tag,
    summary: 'List AI audits',
    permission: 'agent',
    paginated: true,
    query: z.object({ aicall_id: uuid().optional(), ai_id: uuid().optional() }),
    response: listOfShape(FIELDS),
    handler: async ({ ctx, auth, page, query }) => {
      const p = await aiAuditsRepo(ctx.db).list(auth.customerId, page, { aicallId: query.aicall_id, aiId: query.ai_id });
      return { result: p.result.map(aiAuditJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/aiaudits/:id',
    tag,
    summary: 'Get an AI audit',
    permission: 'agent',
    params: idParams,
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const a = await aiAuditsRepo(ctx.db).get(auth.customerId, params.id);
      if (!a) throw missing();
      return aiAuditJson(a);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/aiaudits/:id',
    tag,
    summary: 'Delete an AI audit',
    permission: 'manager',
    params: idParams,
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const a = await aiAuditsRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!a) throw missing();
      return aiAuditJson(a);
    },
  }),
];
