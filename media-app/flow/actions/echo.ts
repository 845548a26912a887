import type { z } from 'zod';
import type * as media from '../../../core/flow/options/media';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/** duration <= 0 means three minutes (voipbin). */
export const DEFAULT_ECHO_MS = 180_000;

/** Sends the caller's audio back for duration ms. */
export class Echo extends FlowTask<z.infer<typeof media.echo>> {
  protected readonly stream: boolean = false;
  async exec(ctx: ActionContext): Promise<Outcome> {
    const d = this.option.duration ?? 0;
    await requireCall(ctx).echo({ duration: d > 0 ? d : DEFAULT_ECHO_MS, stream: this.stream }, ctx.signal);
    return NEXT;
  }
}
