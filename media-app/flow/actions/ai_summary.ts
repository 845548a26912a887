import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { isUnset } from '../../../core/flow';
import { generateSummary, summaryLlm } from '../../../core/ai/summary';
import { LlmError } from '../../../core/llm/client';
import { publishResourceEvent } from '../../../core/events/catalogue';
import { summariesRepo, summaryJson, type SummaryReferenceType } from '../../../core/repos/summaries';
import { transcribeWavFile } from '../../../media-engine';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

const TYPES: SummaryReferenceType[] = ['call', 'conference', 'transcribe', 'recording'];

/**
 * ai_summary: starts a summary of the reference (default: the activeflow's own) and moves on; the
 * summary turns done in the background. svc.ai_summary.id names it.
 */
export class AiSummary extends FlowTask<z.infer<typeof later.ai_summary>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const svc = ctx.services.ai;
    if (!svc) return { kind: 'fail', message: 'action ai_summary needs the ai subsystem, which is not available on this node' };
    const o = this.option;
    const refType = (o.reference_type || ctx.referenceType) as SummaryReferenceType;
    const refId = isUnset(o.reference_id) ? ctx.referenceId : o.reference_id!;
    if (!TYPES.includes(refType)) return { kind: 'fail', message: `ai_summary: reference_type must be one of ${TYPES.join(', ')}` };
    try {
      summaryLlm(svc.deps.env);
    } catch (e) {
      if (e instanceof LlmError) return { kind: 'fail', message: `ai_summary: ${e.message}` };
      throw e;
    }
    const row = await summariesRepo(svc.deps.db).create(ctx.customerId, {
      reference_type: refType,
      reference_id: refId,
      language: o.language || 'en-US',
      activeflow_id: ctx.activeflowId,
      on_end_flow_id: isUnset(o.on_end_flow_id) ? null : o.on_end_flow_id!,
    });
    if (svc.deps.events) await publishResourceEvent(svc.deps.events, 'summary_created', summaryJson(row) as never).catch(() => undefined);
    ctx.vars.set('svc.ai_summary.id', row.id);
    // then its on_end_flow_id, through the speech subsystem (core/speech/summary-flow.ts)
    ctx.background(
      'ai_summary',
      generateSummary({ ...svc.deps, dataDir: svc.dataDir, transcribeFile: transcribeWavFile }, row).then((done) => ctx.services.speech?.summaryDone(done)),
    );
    return NEXT;
  }
}
