import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/** Plays a beep and waits for it. */
export class Beep extends FlowTask {
  async exec(ctx: ActionContext): Promise<Outcome> {
    await requireCall(ctx).beep(ctx.signal);
    return NEXT;
  }
}
