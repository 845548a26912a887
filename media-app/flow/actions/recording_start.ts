import type { z } from 'zod';
import type * as media from '../../../core/flow/options/media';
import { isUnset } from '../../../core/flow';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/** Starts recording the call and moves on; sets svc.recording.id. */
export class RecordingStart extends FlowTask<z.infer<typeof media.recording_start>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const o = this.option;
    const call = requireCall(ctx);
    // the beep is heard before the recording starts (Twilio's <Record playBeep>): it is not in the file. A
    // beep the media server cannot play is noted and the recording goes on (it is a cue, the recording the work)
    if (o.beep_start) {
      await call.beep(ctx.signal).catch((err: unknown) => {
        if (ctx.signal.aborted) throw err;
        ctx.note('beep_failed', { error: err instanceof Error ? err.message : String(err) });
      });
    }
    const { recording_id } = await call.recordingStart({
      format: o.format ?? 'wav',
      end_of_silence: o.end_of_silence ?? 0,
      end_of_key: o.end_of_key ?? '',
      duration: o.duration ?? 0,
      beep_start: o.beep_start ?? false,
      ...(o.twilio_source ? { twilio_source: o.twilio_source } : {}),
    });
    ctx.vars.set('svc.recording.id', recording_id);
    ctx.vars.set('svc.recording.format', o.format ?? 'wav');
    ctx.vars.set('svc.recording.reference_type', 'call');
    ctx.vars.set('svc.recording.reference_id', ctx.call?.info.id ?? '');
    if (!isUnset(o.on_end_flow_id)) ctx.onRecordingEnded(recording_id, o.on_end_flow_id!);
    return NEXT;
  }
}
