import type { z } from 'zod';
import type { twiml_recording } from '../../../core/flow/options/twiml-recording';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';

/** The longest a recording may run (recording_start's duration cap, 4 h) and some: how long the job waits for its end. */
const WAIT_FOR_END_MS = 4 * 3600_000 + 60_000;

/**
 * Our extension (issue 36): follows one recording in the background (media-app/twiml/recording-callbacks.ts)
 * and moves on at once; its callbacks outlive the action and the call (a recording ends with its call).
 */
export class TwimlRecording extends FlowTask<z.infer<typeof twiml_recording>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const call = requireCall(ctx);
    const twiml = ctx.services.twiml;
    if (!twiml) return new SubsystemMissing(this.action, this.option, this.rawOption).exec();
    const recordingId = ctx.vars.get(this.option.recording_variable ?? 'svc.recording.id') ?? '';
    if (!recordingId) {
      ctx.note('twiml_recording', { recording_id: '', sent: 'nothing: no recording was made' });
      return NEXT;
    }
    ctx.background(
      'twiml_recording',
      twiml.recordingJob({
        http: ctx.http,
        speech: ctx.services.speech,
        customerId: ctx.customerId,
        callId: call.info.id,
        recordingId,
        option: this.option,
        timeoutMs: ctx.limits.httpTimeoutMs,
        waitMs: WAIT_FOR_END_MS,
      }),
    );
    return NEXT;
  }
}
