import type { z } from 'zod';
import type * as control from '../../../core/flow/options/control';
import { compileTwiml, TWIML_VARS, TwimlError } from '../../../core/twiml/compile';
import { MAX_TWIML_BYTES } from '../../../core/twiml/parse';
import { toSid } from '../../../core/twilio/sids';
import { spanEvent } from '../../../core/tracing';
import type { CallPort, RecordingEnded } from '../call-port';
import { takeCallbackParams } from '../../../core/twiml/callback-params';
import { type ActionContext, FlowTask, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';

/** What the caller hears when a document cannot be run, before the call hangs up (as Twilio). */
export const APPLICATION_ERROR_SPEECH = 'An application error has occurred. Goodbye.';

/** The twiml subsystem as flow actions see it (services.twiml). */
type TwimlService = NonNullable<ActionContext['services']['twiml']>;

/** A request to the customer's app: what it answered (the document, its headers) once it has. */
interface AppRequest {
  url: string;
  method: 'GET' | 'POST';
  params: Record<string, string>;
  body?: string;
  headers?: [string, string][];
}

/**
 * Our extension (issue 36): fetches TwiML (url, with Twilio's signed request parameters) or takes it
 * inline (twiml), compiles it (core/twiml) and runs it next. Run from the flow's own actions it is
 * pushed (the flow resumes after it); run from a compiled document (Gather/Record/Dial action,
 * Redirect) it replaces the rest of that document, as on Twilio. When url's document cannot be fetched
 * (11200) or does not parse or validate (12100, 12200) and the action has a fallback_url (a number's
 * VoiceFallbackUrl, Calls' FallbackUrl), that one is fetched, signed, with the same parameters plus
 * ErrorCode and ErrorUrl, and its document runs instead. A document that still cannot be run: a
 * `twiml_error` note with Twilio's code, the caller hears APPLICATION_ERROR_SPEECH and the activeflow
 * ends with the error (the call hangs up). Every error (a failed primary's too) and every compile warning
 * (13212) is also the customer's Twilio debugger alert (media-app/twiml/alerts.ts).
 */
export class Twiml extends FlowTask<z.infer<typeof control.twiml>> {
  /** The last request to the customer's app (what an alert shows), and the document it answered. */
  private request: AppRequest | null = null;

  async exec(ctx: ActionContext): Promise<Outcome> {
    const call = requireCall(ctx);
    const extra = takeCallbackParams(ctx.vars);
    const o = this.option;
    this.request = null;
    try {
      Object.assign(extra, await this.recordingParams(ctx, call));
      ctx.vars.set('svc.call.digits', '');
      ctx.vars.set(TWIML_VARS.finishOnKey, '');
      const method = o.method ?? 'POST';
      if (o.twiml !== undefined) return await this.compiled(ctx, o.twiml, undefined, method);
      const svc = ctx.services.twiml;
      if (!svc) return new SubsystemMissing(this.action, this.option, this.rawOption).exec();
      const authToken = await svc.authToken(ctx.customerId);
      if (!authToken) return { kind: 'fail', message: 'twiml: the customer is gone' };
      const params = { ...svc.callParams(ctx.customerId, call.info), ...extra };
      try {
        return await this.fetched(ctx, svc, { url: o.url!, method, params, authToken });
      } catch (e) {
        if (!(e instanceof TwimlError) || ctx.signal.aborted || !o.fallback_url) throw e;
        await this.failed(ctx, e);
        const fallbackParams = { ...params, ErrorCode: String(e.code), ErrorUrl: o.url! };
        return await this.fetched(ctx, svc, { url: o.fallback_url, method: o.fallback_method ?? 'POST', params: fallbackParams, authToken });
      }
    } catch (e) {
      if (!(e instanceof TwimlError) || ctx.signal.aborted) throw e;
      await this.failed(ctx, e);
      await call.talk({ text: APPLICATION_ERROR_SPEECH, language: 'en-US' }, ctx.signal).catch(() => undefined);
      return { kind: 'fail', message: `twiml error ${e.code}: ${e.message}` };
    }
  }

  /** A document that could not be run: the trace's `twiml_error` note and the customer's alert (Twilio's debugger). */
  private async failed(ctx: ActionContext, e: TwimlError): Promise<void> {
    ctx.note('twiml_error', { code: e.code, message: e.message, url: this.request?.url ?? '' });
    await this.alert(ctx, e.code, 'error', e.message, e.code === 11200 ? undefined : this.request?.body);
  }

  private async alert(ctx: ActionContext, code: number, level: 'error' | 'warning', message: string, responseBody?: string): Promise<void> {
    const svc = ctx.services.twiml;
    if (!svc) return;
    const r = this.request;
    await svc.alert(ctx.customerId, ctx.call?.info.id ?? null, {
      code,
      level,
      message,
      url: r?.url ?? '',
      method: r?.method ?? '',
      params: r?.params ?? {},
      ...(responseBody === undefined ? {} : { responseBody }),
      ...(r?.headers ? { responseHeaders: r.headers } : {}),
    });
  }

  /** One document fetched (signed, through the egress policy) and compiled. */
  private async fetched(ctx: ActionContext, svc: TwimlService, f: { url: string; method: 'GET' | 'POST'; params: Record<string, string>; authToken: string }): Promise<Outcome> {
    const request: AppRequest = { url: f.url, method: f.method, params: f.params };
    this.request = request;
    const onAnswer = (headers: [string, string][]) => (request.headers = headers);
    const fetched = await svc.fetch(ctx.http, { ...f, timeoutMs: ctx.limits.httpTimeoutMs, maxBytes: MAX_TWIML_BYTES + 1, signal: ctx.signal, onAnswer });
    request.body = fetched.text;
    spanEvent('twiml fetched', { 'openvoice.twiml.bytes': fetched.text.length });
    return this.compiled(ctx, fetched.text, fetched.url, f.method);
  }

  /** Compiles a document; its warnings (Twilio's 13xxx: it runs all the same) are noted and recorded as alerts. */
  private async compiled(ctx: ActionContext, text: string, documentUrl: string | undefined, method: 'GET' | 'POST'): Promise<Outcome> {
    const warnings: { code: number; message: string }[] = [];
    const actions = compileTwiml(text, { documentUrl, method, warn: (code, message) => warnings.push({ code, message }) });
    spanEvent('twiml compiled', { 'openvoice.twiml.actions': actions.length });
    ctx.note('twiml_compiled', { url: documentUrl ?? '', actions: actions.length });
    for (const w of warnings) {
      ctx.note('twiml_warning', { code: w.code, message: w.message, url: documentUrl ?? '' });
      await this.alert(ctx, w.code, 'warning', w.message, text);
    }
    return { kind: 'twiml', actions };
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
