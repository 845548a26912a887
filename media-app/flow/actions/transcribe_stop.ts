import { ACTION_SPECS } from '../../../core/flow';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/** Stops the call's live transcription (its last segments are stored first); nothing running is fine. */
export class TranscribeStop extends FlowTask {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const speech = ctx.services.speech;
    if (!speech) return { kind: 'fail', message: `action transcribe_stop needs the ${ACTION_SPECS.transcribe_stop.subsystem ?? 'transcribe'} subsystem, which is not running on this server` };
    await speech.stopCallTranscription(requireCall(ctx).info.id);
    return NEXT;
  }
}
