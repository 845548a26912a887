import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';

/** Stops the call's external media, or only its Twilio stream `name`; nothing running is not an error. */
export class ExternalMediaStop extends FlowTask<z.infer<typeof later.external_media_stop>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const service = ctx.services.externalMedia;
    if (!service) return new SubsystemMissing(this.action, this.option, this.rawOption).exec();
    const stopped = await service.stop(requireCall(ctx).info.id, this.option.name);
    ctx.note('external_media_stopped', { running: stopped, ...(this.option.name ? { name: this.option.name } : {}) });
    return NEXT;
  }
}
