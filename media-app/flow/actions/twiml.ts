import type { z } from 'zod';
import type * as control from '../../../core/flow/options/control';
import { compileTwiml, TWIML_VARS, TwimlError } from '../../../core/twiml/compile';
import { MAX_TWIML_BYTES } from '../../../core/twiml/parse';
import { toSid } from '../../../core/twilio/sids';
import { spanEvent } from '../../../core/tracing';
import type { CallPort, RecordingEnded } from '../call-port';
import { fetchTwiml } from '../../twiml/fetch';
import { callParams, takeCallbackParams } from '../../twiml/params';
import { type ActionContext, FlowTask, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';

/** What the caller hears when a document cannot be run, before the call hangs up (as Twilio). */
export const APPLICATION_ERROR_SPEECH = 'An application error has occurred. Goodbye.';

/**
 * Our extension (issue 36): fetches TwiML (url, with Twilio's signed request parameters) or takes it
 * inline (twiml), compiles it (core/twiml) and runs it next. Run from the flow's own actions it is
 * pushed (the flow resumes after it); run from a compiled document (Gather/Record/Dial action,
 * Redirect) it replaces the rest of that document, as on Twilio. A document that cannot be fetched
 * or compiled: a `twiml_error` note with Twilio's code, the caller hears APPLICATION_ERROR_SPEECH
 * and the activeflow ends with the error (the call hangs up).
 */
export class Twiml extends FlowTask<z.infer<typeof control.twiml>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const call = requireCall(ctx);
    const extra = takeCallbackParams(ctx.vars);
    try {
      Object.assign(extra, await this.recordingParams(ctx, call));
      ctx.vars.set('svc.call.digits', '');
      ctx.vars.set(TWIML_VARS.finishOnKey, '');
      const o = this.option;
      let text: string;
      let documentUrl: string | undefined;
      const method = o.method ?? 'POST';
      if (o.twiml !== undefined) text = o.twiml;
      else {
        const svc = ctx.services.twiml;
        if (!svc) return new SubsystemMissing(this.action, this.option, this.rawOption).exec();
        const authToken = await svc.authToken(ctx.customerId);
        if (!authToken) return { kind: 'fail', message: 'twiml: the customer is gone' };
        const params = { ...callParams(ctx.customerId, call.info), ...extra };
        const fetched = await fetchTwiml(ctx.http, { url: o.url!, method, params, authToken, timeoutMs: ctx.limits.httpTimeoutMs, maxBytes: MAX_TWIML_BYTES + 1, signal: ctx.signal });
        text = fetched.text;
        documentUrl = fetched.url;
        spanEvent('twiml fetched', { 'openvoice.twiml.bytes': text.length });
      }
      const actions = compileTwiml(text, { documentUrl, method });
      spanEvent('twiml compiled', { 'openvoice.twiml.actions': actions.length });
      ctx.note('twiml_compiled', { url: o.url ?? '', actions: actions.length });
      return { kind: 'twiml', actions };
    } catch (e) {
      if (!(e instanceof TwimlError) || ctx.signal.aborted) throw e;
      ctx.note('twiml_error', { code: e.code, message: e.message, url: this.option.url ?? '' });
      await call.talk({ text: APPLICATION_ERROR_SPEECH, language: 'en-US' }, ctx.signal).catch(() => undefined);
      return { kind: 'fail', message: `twiml error ${e.code}: ${e.message}` };
    }
  }

  /** Record's callback: waits for the recording to end, then RecordingSid, RecordingUrl, RecordingDuration, Digits. */
  private async recordingParams(ctx: ActionContext, call: CallPort): Promise<Record<string, string>> {
    const id = ctx.vars.get(TWIML_VARS.waitRecording);
    if (!id) return {};
    ctx.vars.set(TWIML_VARS.waitRecording, '');
    const svc = ctx.services.twiml;
    if (!svc) return {};
    const ending = await new Promise<RecordingEnded | null>((resolve, reject) => {
      const done = () => {
        call.off('recording_ended', onEnded);
        ctx.signal.removeEventListener('abort', onAbort);
      };
      const onEnded = (ev: RecordingEnded) => {
        if (ev.recording_id !== id) return;
        done();
        resolve(ev);
      };
      const onAbort = () => {
        done();
        reject(ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('aborted'));
      };
      call.on('recording_ended', onEnded);
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      const already = call.recordingEnded(id);
      if (already) return onEnded(already);
      // its row says when it has ended (this node's recordings know how before the row says so)
      svc.recording(ctx.customerId, id).then((f) => {
        if (!f?.ended) return;
        done();
        resolve(call.recordingEnded(id) ?? null);
      }, reject);
    });
    const facts = await svc.recording(ctx.customerId, id);
    if (!facts) return {};
    const digits = ending?.digits;
    return { RecordingSid: toSid('RE', facts.id), RecordingUrl: facts.url, RecordingDuration: String(facts.durationSec), ...(digits ? { Digits: digits } : {}) };
  }
}
