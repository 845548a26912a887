import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';

/** Stops the call's external media; nothing running is not an error. */
export class ExternalMediaStop extends FlowTask {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const service = ctx.services.externalMedia;
    if (!service) return new SubsystemMissing(this.action, this.option, this.rawOption).exec();
    const stopped = await service.stop(requireCall(ctx).info.id);
    ctx.note('external_media_stopped', { running: stopped });
    return NEXT;
  }
}
