import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { abortError } from '../../kit/clock';
import { ExternalMediaError, externalMediaProblem, statusCallbackProblem } from '../../../core/streams/external-media-options';
import { type ActionContext, NEXT, type Outcome, requireCall } from './base';

/** The media streams subsystem as flow actions see it (services.externalMedia). */
type ExternalMediaService = NonNullable<ActionContext['services']['externalMedia']>;

type Option = z.infer<typeof later.external_media_start>;

/** The options that only encapsulation twilio reads. */
const TWILIO_ONLY = ['name', 'twilio_track', 'twilio_parameters', 'status_callback', 'status_callback_method', 'wait'] as const;

/** Options of encapsulation twilio that another encapsulation was given (a flow author's mistake), or null. */
export function twilioOnlyProblem(option: Option): string | null {
  const given = TWILIO_ONLY.filter((k) => option[k] !== undefined);
  return given.length ? `${given.join(', ')} apply to encapsulation twilio only` : null;
}

/**
 * external_media_start with encapsulation twilio (Twilio Media Streams). Without `wait` the stream is
 * forked (`<Start><Stream>`) and the flow goes on; with `wait` it is bidirectional (`<Connect><Stream>`)
 * and the action lasts until the stream ends (the server closes it, external_media_stop from elsewhere,
 * or the hangup); a bidirectional stream answers the call first, as Twilio's <Connect> does (a forked
 * one leaves the call as it is). A server that cannot be reached is noted and the flow goes on, as for
 * the other encapsulations.
 */
export async function startTwilioStream(ctx: ActionContext, service: ExternalMediaService, callId: string, url: string, option: Option): Promise<Outcome> {
  const problem = externalMediaProblem(url, 'twilio') ?? (option.status_callback ? statusCallbackProblem(option.status_callback) : null);
  if (problem) return { kind: 'fail', message: `external_media_start: ${problem}` };
  const wait = option.wait === true;
  if (wait) await requireCall(ctx).prepareMedia(ctx.signal);
  let stream;
  try {
    stream = await service.startTwilio({
      callId,
      customerId: ctx.customerId,
      url,
      name: option.name,
      track: wait ? 'inbound_track' : (option.twilio_track ?? 'inbound_track'),
      bidirectional: wait,
      parameters: option.twilio_parameters ?? {},
      statusCallback: option.status_callback ? { url: option.status_callback, method: option.status_callback_method ?? 'POST' } : undefined,
    });
  } catch (e) {
    if (!(e instanceof ExternalMediaError)) throw e;
    ctx.note('external_media_failed', { url, encapsulation: 'twilio', message: e.message });
    return NEXT;
  }
  ctx.note('external_media_started', { external_media_id: stream.id, stream_sid: stream.streamSid, name: stream.name, url, encapsulation: 'twilio', wait });
  if (!wait) return NEXT;
  const signal = ctx.signal;
  const why = await new Promise<string>((resolve, reject) => {
    const onAbort = () => {
      stream.stop('the flow stopped');
      reject(abortError(signal));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    void stream.done.then((w) => {
      signal.removeEventListener('abort', onAbort);
      resolve(w);
    });
  });
  ctx.note('external_media_ended', { stream_sid: stream.streamSid, reason: why });
  return NEXT;
}
