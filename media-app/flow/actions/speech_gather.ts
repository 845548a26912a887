import type { z } from 'zod';
import type * as speech from '../../../core/flow/options/speech';
import { checkStt } from '../../../core/speech/providers';
import { abortError } from '../../kit/clock';
import type { CallPort } from '../call-port';
import type { SpeechListener } from '../../speech/gather';
import { PartialResults } from '../../twiml/partial-results';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';

type Option = z.infer<typeof speech.speech_gather>;
type Prompt = NonNullable<Option['prompts']>[number];

/** How a gather ended: words (maybe none), keys, or nothing within the timeout. */
type Ending = { kind: 'speech'; text: string; confidence: number | undefined } | { kind: 'digits'; reason: 'length' | 'key' | 'timeout' } | { kind: 'timeout' };

/**
 * Our extension (issue 36): listens for the caller's speech (media-app/speech/gather.ts) while the
 * prompts play, and with `dtmf` for keys too; whichever starts first wins (speech heard first: keys
 * are ignored; a key first: the speech is dropped). With barge_in (default) the caller's speech or a
 * key cuts the prompts; without it listening starts after them. Then it waits `timeout` for the
 * caller to start; an answer ends after `speech_timeout` of silence. Sets svc.speech.result,
 * svc.speech.confidence (0-1, empty when the recogniser gives none) and svc.call.digits. With
 * partial_callback each recognised segment is sent there as it comes (media-app/twiml/partial-results.ts).
 */
export class SpeechGather extends FlowTask<Option> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const call = requireCall(ctx);
    const svc = ctx.services.speech;
    if (!svc) return new SubsystemMissing(this.action, this.option, this.rawOption).exec();
    const o = this.option;
    let stt: { provider: string; language: string };
    try {
      stt = checkStt(o.provider, o.language);
    } catch (e) {
      return { kind: 'fail', message: `speech_gather: ${(e as Error).message}` };
    }
    const partials = o.partial_callback ? await this.partials(ctx, call, o.partial_callback, stt.language) : null;
    if (partials === undefined) return { kind: 'fail', message: 'speech_gather: partial_callback needs the twiml subsystem and the customer' };
    await call.prepareMedia(ctx.signal);
    ctx.vars.set('svc.speech.result', '');
    ctx.vars.set('svc.speech.confidence', '');
    if (o.dtmf) ctx.vars.set('svc.call.digits', '');
    const bargeIn = o.barge_in ?? true;
    const timeoutMs = o.timeout ?? 5000;
    const listen = () =>
      svc.listen(call.info.id, { language: stt.language, provider: stt.provider, phrases: o.phrases, speechTimeoutMs: o.speech_timeout ?? 0, maxSpeechMs: o.max_speech || undefined });

    const state: { ending: Ending | null; listener: SpeechListener | null } = { ending: null, listener: null };
    let resolveEnded: (e: Ending) => void = () => undefined;
    const ended = new Promise<Ending>((r) => (resolveEnded = r));
    /** The first ending wins. */
    const settle = (e: Ending) => {
      if (state.ending) return;
      state.ending = e;
      resolveEnded(e);
    };
    const cut = new AbortController();
    let digits = '';
    let waitTimer: NodeJS.Timeout | null = null;
    const clearWait = () => {
      if (waitTimer) clearTimeout(waitTimer);
      waitTimer = null;
    };
    const onDtmf = (d: string) => {
      if (state.ending || state.listener?.speaking) return;
      digits += d;
      cut.abort(abortError());
      state.listener?.abort();
      clearWait();
      if (o.digits_key && d === o.digits_key) return settle({ kind: 'digits', reason: 'key' });
      if (o.digits_length && digits.length >= o.digits_length) return settle({ kind: 'digits', reason: 'length' });
      waitTimer = setTimeout(() => settle({ kind: 'digits', reason: 'timeout' }), timeoutMs);
    };
    const attach = async () => {
      const l = await listen();
      if (!l) throw new Error('the call has no media on this node');
      state.listener = l;
      if (partials) l.on('partial', (x) => partials.push(x));
      l.on('speech_start', () => {
        clearWait();
        if (bargeIn) cut.abort(abortError());
      });
      void l.result.then((h) => {
        if (!digits) settle({ kind: 'speech', ...h });
      });
      if (o.dtmf) call.on('dtmf', onDtmf);
    };
    const onAbort = () => settle({ kind: 'timeout' });
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (o.dtmf) ctx.setCollectingDigits(true);
    try {
      if (bargeIn) await attach();
      await this.playPrompts(ctx, call, o.prompts ?? [], cut.signal);
      if (!bargeIn) await attach();
      if (!state.ending && !digits && !state.listener?.speaking) waitTimer = setTimeout(() => settle({ kind: 'timeout' }), timeoutMs);
      const e = await ended;
      if (ctx.signal.aborted) throw abortError(ctx.signal);
      return this.finish(ctx, e, digits);
    } finally {
      clearWait();
      ctx.signal.removeEventListener('abort', onAbort);
      call.off('dtmf', onDtmf);
      if (o.dtmf) ctx.setCollectingDigits(false);
      state.listener?.abort();
      if (partials) ctx.background('partial_results', partials.drained());
    }
  }

  /** The partial results' sender; undefined when the twiml subsystem (the signing key) is not here. */
  private async partials(ctx: ActionContext, call: CallPort, url: string, language: string): Promise<PartialResults | undefined> {
    const twiml = ctx.services.twiml;
    if (!twiml) return undefined;
    const authToken = await twiml.authToken(ctx.customerId);
    if (!authToken) return undefined;
    return new PartialResults({
      http: ctx.http,
      authToken,
      url,
      method: this.option.partial_callback_method ?? 'POST',
      customerId: ctx.customerId,
      callId: call.info.id,
      language,
      timeoutMs: ctx.limits.httpTimeoutMs,
      onError: (code, message) => ctx.note('twiml_error', { code, message, url }),
    });
  }

  /** The prompts in order until the caller cuts them (`cut`); a stopped flow or hangup still throws. */
  private async playPrompts(ctx: ActionContext, call: CallPort, prompts: Prompt[], cut: AbortSignal): Promise<void> {
    const signal = AbortSignal.any([ctx.signal, cut]);
    for (const p of prompts) {
      if (signal.aborted) break;
      try {
        if ('talk' in p) await call.talk({ text: p.talk.text, language: p.talk.language || 'en-US', provider: p.talk.provider }, signal);
        else if ('play' in p) await call.play(p.play.stream_urls, signal);
        else await ctx.clock.sleep(p.pause, signal);
      } catch (e) {
        if (ctx.signal.aborted || !cut.aborted) throw e;
      }
    }
    if (ctx.signal.aborted) throw abortError(ctx.signal);
  }

  private finish(ctx: ActionContext, e: Ending, digits: string): Outcome {
    if (e.kind === 'speech') {
      ctx.vars.set('svc.speech.result', e.text);
      ctx.vars.set('svc.speech.confidence', e.confidence === undefined ? '' : String(Math.round(e.confidence * 10000) / 10000));
      ctx.note('speech_gathered', { result: e.text, confidence: e.confidence ?? null });
    } else if (e.kind === 'digits') {
      ctx.vars.set('svc.call.digits', digits);
      ctx.note('digits_received', { digits, reason: e.reason });
    } else ctx.note('speech_gathered', { result: '', reason: 'timeout' });
    return NEXT;
  }
}
