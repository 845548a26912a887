/**
 * The steps of one call's first audio, from the spans the platform makes (core/tracing), kept in
 * memory in this process (the bench runs sip-server and media-app in it): `action twiml` with its
 * `twiml fetched` / `twiml compiled` events (or `action webhook_send`), `action talk`, `call answer`
 * with `200 sent`, `media play` and `tts synthesize` with `tts first audio`. Each step's time is the
 * milestone's, epoch ms; a step the call did not take is missing.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { hrTimeToMilliseconds, W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';

/** The milestones in the order the first audio passes them. */
export const MILESTONES = [
  'document answered', // the app wrote its answer (the TwiML, or the webhook's)
  'document in', // the platform has it (TwiML: fetched; webhook_send: the action ended)
  'compiled', // TwiML parsed and compiled (webhook_send: same as document in)
  'talk start', // the talk action began (the runner persisted the activeflow first)
  '200 sent', // the call's 200 OK left
  'play start', // the endpoint asked to play (media waits for the 200 OK only)
  'first audio ready', // the synthesis had its first audio (a file: the whole text)
  'first voiced RTP', // the caller heard it
] as const;

/** Off the first audio's path: the answer's status write (progressing), timed from the 200 OK. */
export const STATUS_WRITTEN = 'status written';

export type Milestone = (typeof MILESTONES)[number] | typeof STATUS_WRITTEN;

const ms = (t: ReadableSpan['startTime']) => hrTimeToMilliseconds(t);

export class StepTracer {
  private readonly exporter = new InMemorySpanExporter();
  private readonly provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: this.exporter })] });
  /** talks of the calls taken whose speech came from the TTS cache (must stay 0: each text is new) */
  cacheHits = 0;

  /** Records every span of this process from now on. */
  start(): void {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(this.provider);
  }

  /** The call's milestones (its spans are dropped afterwards); null until its call span has ended. */
  take(callId: string): Partial<Record<Milestone, number>> | null {
    const all = this.exporter.getFinishedSpans();
    const call = all.find((s) => s.name === 'call' && s.attributes['openvoice.call.id'] === callId);
    if (!call) return null;
    const traceId = call.spanContext().traceId;
    const mine = all.filter((s) => s.spanContext().traceId === traceId);
    const first = (name: string) => mine.filter((s) => s.name === name).sort((a, b) => ms(a.startTime) - ms(b.startTime))[0];
    const event = (s: ReadableSpan | undefined, name: string) => {
      const e = s?.events.find((x) => x.name === name);
      return e ? ms(e.time) : undefined;
    };
    const out: Partial<Record<Milestone, number>> = {};
    const twiml = first('action twiml');
    const hook = first('action webhook_send');
    if (twiml) {
      out['document in'] = event(twiml, 'twiml fetched');
      out.compiled = event(twiml, 'twiml compiled');
    } else if (hook) out['document in'] = out.compiled = ms(hook.endTime);
    const talk = first('action talk');
    if (talk) out['talk start'] = ms(talk.startTime);
    const answer = first('call answer');
    if (answer) {
      out['200 sent'] = event(answer, '200 sent');
      out[STATUS_WRITTEN] = ms(answer.endTime);
    }
    const play = first('media play');
    if (play) out['play start'] = ms(play.startTime);
    const tts = first('tts synthesize');
    if (tts?.attributes['openvoice.tts.cache_hit'] === true) this.cacheHits++;
    if (tts) out['first audio ready'] = event(tts, 'tts first audio') ?? ms(tts.endTime);
    this.exporter.reset();
    return out;
  }

  async close(): Promise<void> {
    await this.provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  }
}
