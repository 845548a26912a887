/**
 * Plays a wait document (<Conference waitUrl>, <Enqueue waitUrl>) to a waiting call until `signal`
 * aborts (the room started, an agent answered, the hangup) or the document says Leave/Hangup. The
 * URL is fetched signed through the flow's HTTP client (the egress policy), its steps played, then
 * fetched again: Twilio's loop; a Redirect fetches its URL instead for that turn. A URL ending in
 * .wav or .mp3 is an audio file, played in a loop. A document that cannot be fetched or compiled is
 * a `twiml_error` note on the activeflow and the caller then waits in silence (as on Twilio, the
 * wait goes on).
 */
import { TwimlError } from '../../core/twiml/compile';
import { MAX_TWIML_BYTES } from '../../core/twiml/parse';
import { compileWaitDocument, isAudioUrl, type WaitKind, type WaitStep } from '../../core/twiml/wait';
import { jsonText } from '../../core/json-text';
import type { ActionContext } from '../flow/actions/base';
import type { CallPort } from '../flow/call-port';
import { fetchTwiml } from './fetch';
import { callParams } from './params';

export interface WaitDocument {
  url: string;
  method: 'GET' | 'POST';
  kind: WaitKind;
  /** Parameters added to the call's on each fetch (an Enqueue's QueuePosition, QueueTime...). */
  params?: () => Promise<Record<string, string>>;
  /** Played once, not looped (a <Dial><Queue url> whisper): ends 'done' after its last step (a Redirect is followed). */
  once?: boolean;
}

export type WaitEnd = 'aborted' | 'leave' | 'hangup' | 'done';

/** A document played once (a whisper) follows at most this many Redirects, so a Redirect loop cannot hold the caller. */
const MAX_ONCE_REDIRECTS = 10;

/** A turn that played nothing waits this long before the next fetch, so an empty document cannot spin. */
const MIN_TURN_MS = 1000;

async function playStep(ctx: ActionContext, call: CallPort, step: WaitStep & { kind: 'media' }, signal: AbortSignal): Promise<void> {
  const o = step.action.option as Record<string, unknown>;
  for (let i = 0; i < step.times && !signal.aborted; i++) {
    if (step.action.type === 'sleep') await ctx.clock.sleep(Number(o.duration) || 0, signal);
    else if (step.action.type === 'play') await call.play((o.stream_urls as string[] | undefined) ?? [], signal);
    else
      await call.talk(
        { text: jsonText(o.text), language: jsonText(o.language || 'en-US'), provider: o.provider ? jsonText(o.provider) : undefined, voice_id: o.voice_id ? jsonText(o.voice_id) : undefined },
        signal,
      );
  }
}

const redirected = (steps: WaitStep[]): boolean => steps.some((s) => s.kind === 'redirect');

/** Waits until `signal` aborts; never rejects with the abort. */
function silence(ctx: ActionContext, signal: AbortSignal): Promise<void> {
  return ctx.clock.sleep(2 ** 31 - 1, signal).catch(() => undefined);
}

/** Loops the wait document; resolves with how the wait ended for the caller. */
export async function playWaitDocument(ctx: ActionContext, call: CallPort, w: WaitDocument, signal: AbortSignal): Promise<WaitEnd> {
  const svc = ctx.services.twiml;
  let next = { url: w.url, method: w.method };
  let turns = 0;
  while (!signal.aborted) {
    if (w.once && turns++ > MAX_ONCE_REDIRECTS) {
      ctx.note('twiml_error', { code: 12200, message: `more than ${MAX_ONCE_REDIRECTS} Redirects in a document played once`, url: next.url, wait: w.kind });
      return 'done';
    }
    const started = Date.now();
    try {
      if (isAudioUrl(next.url)) {
        await call.play([next.url], signal);
        if (w.once) return signal.aborted ? 'aborted' : 'done';
      } else {
        if (!svc) throw new TwimlError(11200, 'the twiml subsystem is not running on this node');
        const authToken = await svc.authToken(ctx.customerId);
        if (!authToken) throw new TwimlError(11200, 'the customer is gone');
        const params = { ...callParams(ctx.customerId, call.info), ...((await w.params?.()) ?? {}) };
        const fetched = await fetchTwiml(ctx.http, { url: next.url, method: next.method, params, authToken, timeoutMs: ctx.limits.httpTimeoutMs, maxBytes: MAX_TWIML_BYTES + 1, signal });
        const steps = compileWaitDocument(fetched.text, w.kind, { documentUrl: fetched.url, method: next.method });
        next = { url: w.url, method: w.method };
        for (const step of steps) {
          if (signal.aborted) break;
          if (step.kind === 'leave' || step.kind === 'hangup') return step.kind;
          if (step.kind === 'redirect') {
            next = { url: step.url, method: step.method };
            break;
          }
          // a media failure (TTS, an unplayable file) is noted; the wait goes on with the next step
          await playStep(ctx, call, step, signal).catch((err: Error) => signal.aborted || ctx.note('wait_play_failed', { message: err.message, url: next.url }));
        }
        // played once: done unless the document ended on a Redirect (followed next turn)
        if (w.once && !signal.aborted && !redirected(steps)) return 'done';
      }
    } catch (e) {
      if (signal.aborted) break;
      if (!(e instanceof TwimlError)) throw e;
      ctx.note('twiml_error', { code: e.code, message: e.message, url: next.url, wait: w.kind });
      if (w.once) return 'done';
      await silence(ctx, signal);
      break;
    }
    if (Date.now() - started < MIN_TURN_MS) await ctx.clock.sleep(MIN_TURN_MS - (Date.now() - started), signal).catch(() => undefined);
  }
  return 'aborted';
}
