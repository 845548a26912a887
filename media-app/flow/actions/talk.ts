import type { z } from 'zod';
import type * as media from '../../../core/flow/options/media';
import { abortError } from '../../kit/clock';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/**
 * Speaks text or SSML and waits. async: does not wait. digits_handle "next": a key press ends the
 * prompt and moves on (the digit itself lands in svc.call.digits as for any prompt).
 */
export class Talk extends FlowTask<z.infer<typeof media.talk>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const call = requireCall(ctx);
    const o = this.option;
    const req = { text: o.text, language: o.language || 'en-US', provider: o.provider, voice_id: o.voice_id };
    if (o.async) {
      ctx.background('talk', call.talk(req, ctx.signal));
      return NEXT;
    }
    if (o.digits_handle !== 'next') {
      await call.talk(req, ctx.signal);
      return NEXT;
    }
    const byDigit = new AbortController();
    const onDigit = () => byDigit.abort(abortError());
    call.on('dtmf', onDigit);
    try {
      await call.talk(req, AbortSignal.any([ctx.signal, byDigit.signal]));
    } catch (e) {
      if (ctx.signal.aborted || !byDigit.signal.aborted) throw e;
    } finally {
      call.off('dtmf', onDigit);
    }
    return NEXT;
  }
}
