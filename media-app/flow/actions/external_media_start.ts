import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { isEncapsulation } from '../../../core/streams/encapsulation';
import { ExternalMediaError, externalMediaProblem } from '../../../core/streams/external-media-options';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';
import { startTwilioStream, twilioOnlyProblem } from './external_media_twilio';

/**
 * Connects the call's audio to the customer's WebSocket (url, encapsulation rtp, sln or audiosocket;
 * rtp when omitted) and goes on at once: the stream runs beside the flow until external_media_stop,
 * the hangup, or the server closing it. Bad options end the flow with an error; a server that cannot
 * be reached is noted and the flow goes on (the caller is not dropped because a bot is down).
 * Encapsulation twilio (Twilio Media Streams) is external_media_twilio.ts.
 */
export class ExternalMediaStart extends FlowTask<z.infer<typeof later.external_media_start>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const service = ctx.services.externalMedia;
    if (!service) return new SubsystemMissing(this.action, this.option, this.rawOption).exec();
    const call = requireCall(ctx);
    const url = this.option.url || this.option.external_host || '';
    const encapsulation = this.option.encapsulation || 'rtp';
    if (encapsulation === 'twilio') return startTwilioStream(ctx, service, call.info.id, url, this.option);
    const problem = externalMediaProblem(url, encapsulation) ?? twilioOnlyProblem(this.option);
    if (problem || !isEncapsulation(encapsulation)) return { kind: 'fail', message: `external_media_start: ${problem}` };
    try {
      const em = await service.start({ callId: call.info.id, url, encapsulation });
      ctx.note('external_media_started', { external_media_id: em.id, url, encapsulation });
    } catch (e) {
      if (!(e instanceof ExternalMediaError)) throw e;
      ctx.note('external_media_failed', { url, message: e.message });
    }
    return NEXT;
  }
}
