import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/** Answers an inbound call; precedes media actions. */
export class Answer extends FlowTask {
  async exec(ctx: ActionContext): Promise<Outcome> {
    await requireCall(ctx).answer(ctx.signal);
    return NEXT;
  }
}
