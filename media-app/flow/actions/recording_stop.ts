import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/** Stops the call's active recording; svc.recording.id keeps its id. */
export class RecordingStop extends FlowTask {
  async exec(ctx: ActionContext): Promise<Outcome> {
    await requireCall(ctx).recordingStop();
    return NEXT;
  }
}
