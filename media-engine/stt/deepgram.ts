/**
 * Deepgram's live transcription protocol ({base as wss}/v1/listen) as an SttProvider:
 * query parameters describe the audio (linear16 at the stream's rate, 8 or 16 kHz, mono) and the recogniser options, the key
 * goes in `Authorization: Token <key>`; binary frames carry raw PCM, text frames carry control
 * messages (KeepAlive, CloseStream); the server answers with JSON `Results` messages (interim
 * and final alternatives with word times), `UtteranceEnd`, `SpeechStarted` and a closing
 * `Metadata`. The connection is the one of the other cloud recognisers (cloud.ts): checked by the
 * egress policy and pinned to the checked address, audio held (bounded) until the socket is open.
 */
import type { EgressPolicy } from '../../core/net';
import { CloudSttStream, QUIET_AFTER_MS, egressOf, wsUrl, type CloudWire } from './cloud';
import { SttError, sampleRateOf, type SttProvider, type SttStream, type SttStreamOptions, type TranscriptEvent } from './provider';

export const DEEPGRAM_DEFAULT_BASE = 'https://api.deepgram.com';

export interface DeepgramOptions {
  apiKey: string;
  /** The listen URL; default {DEEPGRAM_BASE_URL or https://api.deepgram.com as wss}/v1/listen. */
  url?: string;
  /** Default nova-2. */
  model?: string;
  /** Audio held while connecting or when the socket is slow, ms. Default 10000. */
  maxBacklogMs?: number;
  /** KeepAlive interval while no audio flows, ms. Default 5000. */
  keepAliveMs?: number;
  /** Default: the egress policy of the environment when a stream is made. */
  egress?: EgressPolicy;
}

/**
 * The provider configured from `env` when a stream is made: DEEPGRAM_API_KEY, and DEEPGRAM_URL (a
 * whole listen URL, kept from before) or DEEPGRAM_BASE_URL (the vendor's base, as for its voice).
 */
export function deepgramFromEnv(env: NodeJS.ProcessEnv = process.env): DeepgramProvider {
  const base = (env.DEEPGRAM_BASE_URL?.trim() || DEEPGRAM_DEFAULT_BASE).replace(/\/+$/, '');
  return new DeepgramProvider({ apiKey: env.DEEPGRAM_API_KEY?.trim() ?? '', url: env.DEEPGRAM_URL?.trim() || wsUrl(base, '/v1/listen').toString() });
}

interface DgAlternative {
  transcript?: string;
  confidence?: number;
  words?: Array<{ word: string; start: number; end: number; confidence?: number }>;
}
interface DgResults {
  type: 'Results';
  start?: number;
  duration?: number;
  is_final?: boolean;
  speech_final?: boolean;
  channel?: { alternatives?: DgAlternative[] };
}

export class DeepgramProvider implements SttProvider {
  readonly name = 'deepgram';

  constructor(private readonly opts: DeepgramOptions) {}

  /** The listen URL with the audio format and recogniser options. */
  urlFor(o: SttStreamOptions = {}): string {
    const u = new URL(this.opts.url ?? wsUrl(DEEPGRAM_DEFAULT_BASE, '/v1/listen'));
    const q = u.searchParams;
    q.set('encoding', 'linear16');
    q.set('sample_rate', String(sampleRateOf(o)));
    q.set('channels', '1');
    q.set('model', this.opts.model ?? 'nova-2');
    q.set('language', o.language ?? 'en-US');
    q.set('interim_results', 'true');
    q.set('punctuate', 'true');
    q.set('utterance_end_ms', '1000');
    if (o.endpointingMs !== undefined && Number.isFinite(o.endpointingMs)) q.set('endpointing', String(Math.max(10, Math.round(o.endpointingMs))));
    for (const p of o.phrases ?? []) q.append('keywords', p);
    return u.toString();
  }

  createStream(o: SttStreamOptions = {}): SttStream {
    const key = o.apiKey || this.opts.apiKey;
    if (!key) throw new SttError('RECOGNIZER_FAILED', "deepgram needs an API key (the AI's parameter.stt_key or DEEPGRAM_API_KEY)");
    const direction = o.direction ?? 'inbound';
    const wire: CloudWire = {
      vendor: 'deepgram',
      url: new URL(this.urlFor(o)),
      headers: { Authorization: `Token ${key}` },
      encode: (pcm) => Buffer.from(pcm),
      endMessage: JSON.stringify({ type: 'CloseStream' }),
      endTimeoutMs: 10_000,
      // after CloseStream the vendor sends Metadata and closes
      isLast: (m) => m.type === 'Metadata',
      onMessage: (m, s) => {
        if (m.type !== 'Results') return;
        const ev = transcriptOf(m as unknown as DgResults, direction);
        if (ev) s.transcript(ev);
      },
      keepAlive: { message: JSON.stringify({ type: 'KeepAlive' }), everyMs: this.opts.keepAliveMs ?? 5000 },
      // quiet frames go out batched only past the utterance end (1000 ms) and the endpointing asked
      quietAfterMs: Math.max(QUIET_AFTER_MS, 1000 + 500, (o.endpointingMs ?? 0) + 500),
    };
    // 16-bit samples: 16 bytes a ms at 8 kHz, 32 at 16 kHz
    const bytesPerMs = (sampleRateOf(o) * 2) / 1000;
    return new CloudSttStream(wire, this.opts.egress ?? egressOf(), (this.opts.maxBacklogMs ?? 10_000) * bytesPerMs);
  }
}

function transcriptOf(r: DgResults, direction: TranscriptEvent['direction']): TranscriptEvent | null {
  const alt = r.channel?.alternatives?.[0];
  const text = alt?.transcript?.trim() ?? '';
  if (!text) return null;
  const words = alt?.words ?? [];
  const start = words.length ? words[0].start : (r.start ?? 0);
  const end = words.length ? words[words.length - 1].end : (r.start ?? 0) + (r.duration ?? 0);
  const ev: TranscriptEvent = {
    text,
    final: r.is_final === true,
    offsetMs: Math.round(start * 1000),
    durationMs: Math.max(0, Math.round((end - start) * 1000)),
    direction,
  };
  if (typeof alt?.confidence === 'number') ev.confidence = alt.confidence;
  if (ev.final) ev.endOfUtterance = r.speech_final === true;
  return ev;
}
