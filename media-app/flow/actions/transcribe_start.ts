import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { ACTION_SPECS, isUnset } from '../../../core/flow';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/**
 * Starts live transcription of the call (media-app/speech) and moves on; segments become
 * Transcripts and transcript_created events. Sets svc.transcribe.{id,language,direction}.
 */
export class TranscribeStart extends FlowTask<z.infer<typeof later.transcribe_start>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const speech = ctx.services.speech;
    if (!speech) return { kind: 'fail', message: `action transcribe_start needs the ${ACTION_SPECS.transcribe_start.subsystem ?? 'transcribe'} subsystem, which is not running on this server` };
    const call = requireCall(ctx);
    const o = this.option;
    const row = await speech.transcribeCall(call.info.id, ctx.customerId, {
      language: o.language || undefined,
      provider: o.provider || undefined,
      direction: o.direction,
      on_end_flow_id: isUnset(o.on_end_flow_id) ? undefined : o.on_end_flow_id,
      activeflow_id: ctx.activeflowId,
    });
    ctx.vars.set('svc.transcribe.id', row.id);
    ctx.vars.set('svc.transcribe.language', row.language);
    ctx.vars.set('svc.transcribe.direction', row.direction);
    return NEXT;
  }
}
