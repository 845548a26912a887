import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';
import type { CallPort } from '../call-port';
import { onceAborted } from '../../kit/clock';

/** The conference subsystem as flow actions see it (services.conferences). */
type ConferenceService = NonNullable<ActionContext['services']['conferences']>;

/**
 * confbridge_join: the call is in the conference's mix (confbridge_id is the conference id: each
 * conference has one confbridge) until it hangs up, is kicked, is ejected or the conference ends;
 * then the flow goes on. With `start_on_enter: false` (TwiML startConferenceOnEnter="false") the
 * call first waits out of the mix (neither heard by nor hearing the others) until the room has
 * started, hearing `wait_url` (absent: the node's music on hold; '': silence).
 */
export class ConfbridgeJoin extends FlowTask<z.infer<typeof later.confbridge_join>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const service = ctx.services.conferences;
    if (!service) return new SubsystemMissing(this.action, this.option, this.rawOption).exec();
    const call = requireCall(ctx);
    if (this.option.start_on_enter === false) await this.waitForStart(ctx, service, call);
    const reason = await service.join({
      customerId: ctx.customerId,
      conferenceId: this.option.confbridge_id,
      callId: call.info.id,
      activeflowId: ctx.activeflowId,
      signal: ctx.signal,
    });
    ctx.note('conference_left', { conference_id: this.option.confbridge_id, reason });
    return NEXT;
  }

  /** The wait_url document (services.twiml); without the twiml subsystem, a `twiml_error` note and silence, as a document that cannot be fetched. */
  private async waitDocument(ctx: ActionContext, call: CallPort, url: string, signal: AbortSignal): Promise<unknown> {
    const twiml = ctx.services.twiml;
    if (twiml) return twiml.playWaitDocument(ctx, call, { url, method: this.option.wait_method ?? 'POST', kind: 'conference' }, signal);
    ctx.note('twiml_error', { code: 11200, message: 'the twiml subsystem is not running on this node', url, wait: 'conference' });
    // silence until the wait ends (waitForStart aborts `signal` when the room starts): no timer
    return new Promise<void>((resolve) => (signal.aborted ? resolve() : void onceAborted(signal, resolve)));
  }

  /** The wait audio plays until the room starts (or the call ends: the abort reaches the runner). */
  private async waitForStart(ctx: ActionContext, service: ConferenceService, call: CallPort): Promise<void> {
    const o = this.option;
    const wait = new AbortController();
    const signal = AbortSignal.any([wait.signal, ctx.signal]);
    ctx.note('conference_waiting', { conference_id: o.confbridge_id });
    await call.prepareMedia(ctx.signal);
    const audio = o.wait_url === undefined ? service.holdMusic(call.info.id, signal) : o.wait_url === '' ? Promise.resolve() : this.waitDocument(ctx, call, o.wait_url, signal);
    const audioDone = audio.catch((err: Error) => signal.aborted || ctx.note('conference_wait_audio_failed', { message: err.message }));
    try {
      await service.waitStarted(o.confbridge_id, ctx.signal);
    } finally {
      wait.abort();
      await audioDone;
    }
  }
}
