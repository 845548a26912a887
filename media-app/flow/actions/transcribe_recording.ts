import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { ACTION_SPECS, isUnset } from '../../../core/flow';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

/**
 * Transcribes every recording of the call (one Transcribe each, reference_type recording) in the
 * background and moves on. Only for activeflows of a call (voipbin); sets svc.transcribe.id to the
 * last one started.
 */
export class TranscribeRecording extends FlowTask<z.infer<typeof later.transcribe_recording>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const speech = ctx.services.speech;
    if (!speech)
      return { kind: 'fail', message: `action transcribe_recording needs the ${ACTION_SPECS.transcribe_recording.subsystem ?? 'transcribe'} subsystem, which is not running on this server` };
    if (ctx.referenceType !== 'call') return { kind: 'fail', message: 'transcribe_recording works only in the activeflow of a call' };
    const o = this.option;
    const rows = await speech.transcribeCallRecordings(ctx.referenceId, ctx.customerId, {
      language: o.language || undefined,
      provider: o.provider || undefined,
      direction: o.direction,
      on_end_flow_id: isUnset(o.on_end_flow_id) ? undefined : o.on_end_flow_id,
      activeflow_id: ctx.activeflowId,
    });
    const last = rows[rows.length - 1];
    if (last) {
      ctx.vars.set('svc.transcribe.id', last.id);
      ctx.vars.set('svc.transcribe.language', last.language);
      ctx.vars.set('svc.transcribe.direction', last.direction);
    }
    ctx.note('transcribe_recording', { transcribe_ids: rows.map((r) => r.id) });
    return NEXT;
  }
}
