/**
 * Audio that is already whole (a recording, a file) through an STT stream: the frames written as fast
 * as the recogniser takes them and never faster, so none is dropped (write() drops past the stream's
 * backlog: the feeder waits while it is over half full), then the finished utterances.
 */
import { readWav } from '../audio/wav';
import { SttError, type Direction, type SampleRate, type TranscriptEvent } from './provider';
import { createSttProvider } from './index';

export interface SamplesTranscription {
  /** the final utterances' text joined by spaces */
  text: string;
  /** frames the stream dropped all the same (0 unless the recogniser stopped taking audio) */
  droppedFrames: number;
}

export interface TranscribeSamplesOptions {
  language: string;
  provider?: string;
  direction?: Direction;
  /** the samples' rate (8000 default; 16000 for a wideband recording) */
  sampleRate?: SampleRate;
  /** each final utterance as it comes */
  onFinal?: (t: TranscriptEvent) => void;
  /** how long the recogniser may take no audio (its backlog over half full) before the transcription fails (STALL_MS) */
  stallMs?: number;
}

/** How long the feeder waits for the backlog to drain, ms. */
const DRAIN_WAIT_MS = 20;
/** A recogniser that took no audio this long (no error either) has stopped: the transcription fails. */
const STALL_MS = 30_000;

/** `samples` through a new stream of the provider; rejects with the stream's error. */
export async function transcribeSamples(samples: Int16Array, o: TranscribeSamplesOptions): Promise<SamplesTranscription> {
  const rate = o.sampleRate ?? 8000;
  const frame = (160 * rate) / 8000;
  const stream = createSttProvider(o.provider).createStream({ language: o.language, direction: o.direction, sampleRate: rate });
  const parts: string[] = [];
  stream.on('transcript', (t: TranscriptEvent) => {
    if (!t.final || !t.text.trim()) return;
    parts.push(t.text.trim());
    o.onFinal?.(t);
  });
  // set by the stream's error event (a holder: the loop reads it after awaits)
  const got: { error: Error | null } = { error: null };
  const stallMs = o.stallMs ?? STALL_MS;
  stream.on('error', (e: Error) => (got.error ??= e));
  for (let off = 0; off < samples.length && !got.error; off += frame) {
    // the feeding phase's wait, one 20 ms timer at a time, bounded in elapsed time: a recogniser that stopped taking audio ends it
    const waitingSince = Date.now();
    while (stream.backlogShare() > 0.5 && !got.error) {
      if (Date.now() - waitingSince >= stallMs) got.error = new SttError('RECOGNIZER_FAILED', `the recogniser took no audio for ${stallMs} ms`);
      else await new Promise((r) => setTimeout(r, DRAIN_WAIT_MS));
    }
    if (got.error) break;
    const f = new Int16Array(frame);
    f.set(samples.subarray(off, Math.min(samples.length, off + frame)));
    stream.write(f);
    // a turn of the event loop now and then: the socket flushes, the stream's events come
    if ((off / frame) % 50 === 49) await new Promise((r) => setImmediate(r));
  }
  if (got.error) {
    stream.abort();
    throw got.error;
  }
  await stream.end();
  const late = got.error as Error | null; // an error while it ended
  if (late) throw late;
  return { text: parts.join(' '), droppedFrames: stream.droppedFrames };
}

/** A WAV file (8 kHz 16-bit mono, as the recorder writes) transcribed: its final utterances joined by spaces. */
export async function transcribeWavFile(file: string, language: string, provider?: string): Promise<string> {
  const { samples } = readWav(file);
  return (await transcribeSamples(samples, { language, provider })).text;
}
