/**
 * Media operations as spans of their own (core/tracing, docs/observability.md "Traces"), each a child
 * of what was active when it was asked for (the flow action): `media play` (a file, URL, tone or
 * TTS prompt) with a `tts synthesize` child per text spoken, `media record` (start to stop),
 * `media mix` (a conference member's join to leave) and `media fork` (a stream's audio tap). Each
 * ends with `openvoice.media.outcome`; a failed one is marked error. Nothing a customer wrote is
 * recorded (no text, no URL). With tracing off every span here is OpenTelemetry's no-op.
 */
import { contextOf as contextOfSpan, failSpan, startSpan, type Attributes, type Span } from '../../core/tracing';
import type { PlayResult, RecordResult, SynthesisReport } from '../../media-engine';

export type PromptKind = 'tts' | 'file' | 'url' | 'tone';

/** The error codes of a failed speech synthesis (media-engine/tts/provider.ts TtsErrorCode). */
const TTS_FAILURES = new Set(['EMPTY_TEXT', 'UNSUPPORTED_LANGUAGE', 'SYNTHESIS_FAILED', 'TIMEOUT', 'UNKNOWN_PROVIDER']);

const codeOf = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
};

/** One `tts synthesize` span under `parent`, at the times the engine measured. */
function synthesisSpan(parent: Span, r: SynthesisReport, tts: Attributes): void {
  const span = startSpan('tts synthesize', {
    parent: contextOfSpan(parent),
    startTime: r.startedAt,
    attributes: { ...tts, 'openvoice.tts.provider': r.provider, 'openvoice.tts.cache_hit': r.cached, 'openvoice.media.outcome': 'synthesized' },
  });
  if (r.firstAudioAt !== undefined) span.addEvent('tts first audio', r.firstAudioAt);
  if (r.error) {
    span.setAttributes({ 'openvoice.media.outcome': 'failed', 'openvoice.tts.error': r.error });
    failSpan(span, new Error(`synthesis failed: ${r.error}`));
  }
  span.end(r.endedAt);
}

/**
 * Runs a play of the endpoint as `media play` (`kind`: what is played; `tts`: the request's
 * language, voice and text length for a TTS prompt). Interrupted (barge-in, stop) is an outcome,
 * not an error; a rejection is an error, and a failed synthesis also gets its failed `tts synthesize`.
 */
export async function tracePlay(kind: PromptKind, count: number, tts: Attributes | null, play: () => Promise<PlayResult>): Promise<PlayResult> {
  const span = startSpan('media play', { attributes: { 'openvoice.media.prompt': kind, 'openvoice.media.sources': count } });
  if (!span.isRecording()) return play().finally(() => span.end());
  try {
    const r = await play();
    for (const s of r.synthesized ?? []) synthesisSpan(span, s, tts ?? {});
    span.setAttributes({ 'openvoice.media.outcome': r.interrupted ? 'interrupted' : 'played', 'openvoice.media.played_ms': r.playbackMilliseconds });
    return r;
  } catch (err) {
    if (tts && TTS_FAILURES.has(codeOf(err))) {
      const failed = startSpan('tts synthesize', { parent: contextOfSpan(span), attributes: { ...tts, 'openvoice.media.outcome': 'failed', 'openvoice.tts.error': codeOf(err) } });
      failSpan(failed, new Error(`synthesis failed: ${codeOf(err)}`));
      failed.end();
    }
    span.setAttribute('openvoice.media.outcome', 'failed');
    // the engine's message may name the customer's URL: the span gets its code only
    failSpan(span, new Error(codeOf(err) ? `play failed: ${codeOf(err)}` : 'play failed'));
    throw err;
  } finally {
    span.end();
  }
}

/** What a play request plays, for its span: tts, a tone, a URL or a file (the first source decides). */
export function promptKind(source: string | undefined): PromptKind {
  if (!source) return 'file';
  if (/^(tone|silence)_stream:/i.test(source)) return 'tone';
  return /^https?:/i.test(source) ? 'url' : 'file';
}

/** `media record`: opened when the recorder starts, ended with its result (or failure). */
export function traceRecord(recordingId: string): { end(r: RecordResult | null, err?: unknown): void } {
  const span = startSpan('media record', { attributes: { 'openvoice.recording.id': recordingId } });
  return {
    end(r, err) {
      if (r) {
        span.setAttributes({
          'openvoice.media.outcome': r.reason,
          'openvoice.media.record.duration_ms': r.recordMilliseconds,
          'openvoice.media.sample_rate': r.rate,
        });
      } else {
        span.setAttribute('openvoice.media.outcome', 'failed');
        failSpan(span, err ?? new Error('recording failed'));
      }
      span.end();
    },
  };
}

/** A span ended once with an outcome, or as failed: `media mix` and `media fork`. */
export interface MediaSpan {
  end(outcome: string): void;
  fail(err: unknown): void;
}

function once(span: Span): MediaSpan {
  let done = false;
  return {
    end(outcome) {
      if (done) return;
      done = true;
      span.setAttribute('openvoice.media.outcome', outcome);
      span.end();
    },
    fail(err) {
      if (done) return;
      done = true;
      span.setAttribute('openvoice.media.outcome', 'failed');
      failSpan(span, err);
      span.end();
    },
  };
}

/** `media mix`: a call's membership of a conference's mix, from its join to its leave (the reason). */
export const traceMix = (conferenceId: string, conferencecallId: string): MediaSpan =>
  once(startSpan('media mix', { attributes: { 'openvoice.conference.id': conferenceId, 'openvoice.conferencecall.id': conferencecallId } }));

/** `media fork`: a stream's tap of a call (`mix`: in, out, both; a Twilio stream's tracks) or of a conference's mix. */
export const traceFork = (target: 'call' | 'conference', id: string, mix: string): MediaSpan =>
  once(startSpan('media fork', { attributes: { 'openvoice.media.fork.target': target, 'openvoice.media.fork.target_id': id, 'openvoice.media.fork.mix': mix } }));
