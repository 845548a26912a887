/**
 * Cartesia's streaming speech-to-text (WebSocket {base as ws(s)}/stt/websocket, model ink-whisper)
 * as an SttProvider. The audio is described in the query (`encoding=pcm_s16le`, `sample_rate` the
 * stream's rate: 16000 on a wideband leg, 8000 otherwise), the key goes in `X-API-Key` with
 * `Cartesia-Version` on the upgrade; binary frames carry the PCM; the text message `done` ends the
 * stream (the vendor flushes, answers `{type:'done'}` and closes). The vendor answers `transcript`
 * messages (`is_final`, `text`, `duration`, `words` with times in seconds) and `error`. This endpoint
 * has no end-of-utterance signal of its own (its finals come after `max_silence_duration_secs` of
 * silence), so the turn rules of core/ai/turns.ts alone decide.
 */
import { CloudSttStream, egressOf, endpointFromEnv, wsUrl, type CloudEndpoint, type CloudWire } from './cloud';
import { SttError, sampleRateOf, type SttProvider, type SttStream, type SttStreamOptions } from './provider';

const VERSION = '2025-04-16';

interface CartesiaTranscript {
  type: 'transcript';
  is_final?: boolean;
  text?: string;
  duration?: number;
  words?: Array<{ word?: string; start?: number; end?: number }>;
}

export class CartesiaSttProvider implements SttProvider {
  readonly name = 'cartesia';

  /** `endpoint`: default CARTESIA_BASE_URL / CARTESIA_API_KEY of the environment when a stream is made. */
  constructor(private readonly endpoint?: CloudEndpoint) {}

  /** The streaming URL with the audio format and recogniser options. */
  urlFor(o: SttStreamOptions = {}, base = this.config().baseUrl): URL {
    const u = wsUrl(base, '/stt/websocket');
    const q = u.searchParams;
    q.set('model', 'ink-whisper');
    q.set('language', (o.language ?? 'en-US').slice(0, 2).toLowerCase());
    q.set('encoding', 'pcm_s16le');
    q.set('sample_rate', String(sampleRateOf(o)));
    q.set('min_volume', '0.1');
    q.set('max_silence_duration_secs', '0.4');
    return u;
  }

  createStream(o: SttStreamOptions = {}): SttStream {
    const ep = this.config();
    const key = o.apiKey || ep.apiKey;
    if (!key) throw new SttError('RECOGNIZER_FAILED', "cartesia needs an API key (the AI's parameter.stt_key or CARTESIA_API_KEY)");
    const direction = o.direction ?? 'inbound';
    const rate = sampleRateOf(o);
    const wire: CloudWire = {
      vendor: 'cartesia',
      url: this.urlFor(o, ep.baseUrl),
      headers: { 'X-API-Key': key, 'Cartesia-Version': VERSION },
      encode: (pcm) => Buffer.from(pcm),
      endMessage: 'done',
      endTimeoutMs: 10_000,
      isLast: (m) => m.type === 'done',
      onMessage: (m, s) => {
        if (m.type === 'error') return `the vendor reported an error${typeof m.status_code === 'number' ? ` (${m.status_code})` : ''}`;
        if (m.type !== 'transcript') return;
        const t = m as unknown as CartesiaTranscript;
        const text = (t.text ?? '').trim();
        if (!text) return;
        const words = (t.words ?? []).filter((w) => typeof w.start === 'number' && typeof w.end === 'number');
        const start = words.length ? words[0]!.start! : 0;
        const end = words.length ? words[words.length - 1]!.end! : start + (t.duration ?? 0);
        s.transcript({ text, final: t.is_final === true, offsetMs: Math.round(start * 1000), durationMs: Math.max(0, Math.round((end - start) * 1000)), direction });
      },
    };
    // 16-bit samples: a 10 s backlog at most
    return new CloudSttStream(wire, egressOf(), rate * 2 * 10);
  }

  private config(): CloudEndpoint {
    return this.endpoint ?? endpointFromEnv('CARTESIA', 'https://api.cartesia.ai');
  }
}
