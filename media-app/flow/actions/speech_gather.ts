import type { z } from 'zod';
import type * as speech from '../../../core/flow/options/speech';
import { checkStt } from '../../../core/speech/providers';
import { abortError } from '../../kit/clock';
import type { CallPort } from '../call-port';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';

/** <Gather partialResultCallback>'s sender (services.twiml.partialResults). */
type PartialResults = ReturnType<NonNullable<ActionContext['services']['twiml']>['partialResults']>;

/** A running recogniser of the call (services.speech.listen). */
type SpeechListener = NonNullable<Awaited<ReturnType<NonNullable<ActionContext['services']['speech']>['listen']>>>;

type Option = z.infer<typeof speech.speech_gather>;
type Prompt = NonNullable<Option['prompts']>[number];

type Stt = { provider: string; language: string };
type SpeechService = NonNullable<ActionContext['services']['speech']>;

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
    let stt: Stt;
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
    return this.gather(ctx, call, svc, stt, partials);
  }

  /** Listens and plays the prompts, then waits for the race's ending; every listener goes when it ends. */
  private async gather(ctx: ActionContext, call: CallPort, svc: SpeechService, stt: Stt, partials: PartialResults | null): Promise<Outcome> {
    const o = this.option;
    const bargeIn = o.barge_in ?? true;
    const race = new GatherRace(o, o.timeout ?? 5000, bargeIn);
    const attach = async () => {
      const l = await svc.listen(call.info.id, { language: stt.language, provider: stt.provider, phrases: o.phrases, speechTimeoutMs: o.speech_timeout ?? 0, maxSpeechMs: o.max_speech || undefined });
      if (!l) throw new Error('the call has no media on this node');
      race.hear(l, partials);
      if (o.dtmf) call.on('dtmf', race.onDtmf);
    };
    const onAbort = () => race.settle({ kind: 'timeout' });
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (o.dtmf) ctx.setCollectingDigits(true);
    try {
      if (bargeIn) await attach();
      await this.playPrompts(ctx, call, o.prompts ?? [], race.cut.signal);
      if (!bargeIn) await attach();
      race.awaitCaller();
      const e = await race.ended;
      if (ctx.signal.aborted) throw abortError(ctx.signal);
      return this.finish(ctx, e, race.digits);
    } finally {
      race.clearWait();
      ctx.signal.removeEventListener('abort', onAbort);
      call.off('dtmf', race.onDtmf);
      if (o.dtmf) ctx.setCollectingDigits(false);
      race.listener?.abort();
      if (partials) ctx.background('partial_results', partials.drained());
    }
  }

  /** The partial results' sender; undefined when the twiml subsystem (the signing key) is not here. */
  private async partials(ctx: ActionContext, call: CallPort, url: string, language: string): Promise<PartialResults | undefined> {
    const twiml = ctx.services.twiml;
    if (!twiml) return undefined;
    const authToken = await twiml.authToken(ctx.customerId);
    if (!authToken) return undefined;
    return twiml.partialResults({
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

/**
 * One gather's race between the caller's speech and keys: the first ending wins (speech heard first:
 * keys are ignored; a key first: the speech is dropped). It owns the timer that waits for the caller.
 */
class GatherRace {
  ending: Ending | null = null;
  listener: SpeechListener | null = null;
  digits = '';
  /** Aborted when the caller cuts the prompts (a key, or speech with barge_in). */
  readonly cut = new AbortController();
  readonly ended: Promise<Ending>;
  private resolveEnded: (e: Ending) => void = () => undefined;
  private waitTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly o: Option,
    private readonly timeoutMs: number,
    private readonly bargeIn: boolean,
  ) {
    this.ended = new Promise<Ending>((r) => (this.resolveEnded = r));
  }

  /** The first ending wins. */
  settle(e: Ending): void {
    if (this.ending) return;
    this.ending = e;
    this.resolveEnded(e);
  }

  clearWait(): void {
    if (this.waitTimer) clearTimeout(this.waitTimer);
    this.waitTimer = null;
  }

  /** After the prompts: wait `timeout` for the caller to start, unless they already have. */
  awaitCaller(): void {
    if (!this.ending && !this.digits && !this.listener?.speaking) this.waitTimer = setTimeout(() => this.settle({ kind: 'timeout' }), this.timeoutMs);
  }

  readonly onDtmf = (d: string): void => {
    if (this.ending || this.listener?.speaking) return;
    this.digits += d;
    this.cut.abort(abortError());
    this.listener?.abort();
    this.clearWait();
    if (this.o.digits_key && d === this.o.digits_key) return this.settle({ kind: 'digits', reason: 'key' });
    if (this.o.digits_length && this.digits.length >= this.o.digits_length) return this.settle({ kind: 'digits', reason: 'length' });
    this.waitTimer = setTimeout(() => this.settle({ kind: 'digits', reason: 'timeout' }), this.timeoutMs);
  };

  /** The recogniser joins the race: speech starting stops the wait (and cuts the prompts with barge_in). */
  hear(l: SpeechListener, partials: PartialResults | null): void {
    this.listener = l;
    if (partials) l.on('partial', (x) => partials.push(x));
    l.on('speech_start', () => {
      this.clearWait();
      if (this.bargeIn) this.cut.abort(abortError());
    });
    void l.result.then((h) => {
      if (!this.digits) this.settle({ kind: 'speech', ...h });
    });
  }
}
