/**
 * ElevenLabs' realtime speech-to-text (Scribe realtime: WebSocket {base as ws(s)}/v1/speech-to-text/realtime)
 * as an SttProvider. Query: `model_id=scribe_v2_realtime`, `audio_format=pcm_16000` (a wideband leg)
 * or `pcm_8000`, `commit_strategy=vad` (the vendor's VAD commits each utterance), `include_timestamps=true`,
 * `language_code`; the key goes in `xi-api-key`. Audio goes as JSON `input_audio_chunk` messages
 * (`audio_base_64`, `commit: false`, `sample_rate`), one per 20 ms frame (five once the line is quiet: cloud.ts); the end is a last chunk with
 * `commit: true`. The vendor answers `session_started`, `partial_transcript` (interim),
 * `committed_transcript` and `committed_transcript_with_timestamps` (the final, used for its word
 * times; the plain one is ignored so each utterance is one final) and error messages (`auth_error`,
 * `quota_exceeded`, `rate_limited`, `input_error`, `transcriber_error`, `error`, …). A commit by the
 * vendor's VAD is its end-of-utterance signal: each final carries `endOfUtterance: true`.
 */
import { CloudSttStream, egressOf, endpointFromEnv, wsUrl, type CloudEndpoint, type CloudWire } from './cloud';
import { SttError, sampleRateOf, type SttProvider, type SttStream, type SttStreamOptions } from './provider';

interface Word {
  text?: string;
  start?: number;
  end?: number;
  type?: string;
}

/** Messages that report a problem without ending the session. */
const HARMLESS = new Set(['commit_throttled', 'insufficient_audio_activity']);
const FAILURES = new Set([
  'error',
  'auth_error',
  'quota_exceeded',
  'rate_limited',
  'input_error',
  'transcriber_error',
  'unaccepted_terms',
  'queue_overflow',
  'resource_exhausted',
  'session_time_limit_exceeded',
  'chunk_size_exceeded',
]);

export class ElevenLabsSttProvider implements SttProvider {
  readonly name = 'elevenlabs';

  /** `endpoint`: default ELEVENLABS_BASE_URL / ELEVENLABS_API_KEY of the environment when a stream is made. */
  constructor(private readonly endpoint?: CloudEndpoint) {}

  /** The realtime URL with the audio format and recogniser options. */
  urlFor(o: SttStreamOptions = {}, base = this.config().baseUrl): URL {
    const u = wsUrl(base, '/v1/speech-to-text/realtime');
    const q = u.searchParams;
    q.set('model_id', 'scribe_v2_realtime');
    q.set('audio_format', `pcm_${sampleRateOf(o)}`);
    q.set('commit_strategy', 'vad');
    q.set('vad_silence_threshold_secs', '0.5');
    q.set('include_timestamps', 'true');
    q.set('language_code', (o.language ?? 'en-US').slice(0, 2).toLowerCase());
    return u;
  }

  createStream(o: SttStreamOptions = {}): SttStream {
    const ep = this.config();
    const key = o.apiKey || ep.apiKey;
    if (!key) throw new SttError('RECOGNIZER_FAILED', "elevenlabs needs an API key (the AI's parameter.stt_key or ELEVENLABS_API_KEY)");
    const direction = o.direction ?? 'inbound';
    const rate = sampleRateOf(o);
    const chunk = (audio: string, commit: boolean) => JSON.stringify({ message_type: 'input_audio_chunk', audio_base_64: audio, commit, sample_rate: rate });
    const wire: CloudWire = {
      vendor: 'elevenlabs',
      url: this.urlFor(o, ep.baseUrl),
      headers: { 'xi-api-key': key },
      encode: (pcm) => chunk(pcm.toString('base64'), false),
      endMessage: chunk('', true),
      // the last commit is answered by a final, or by nothing when no audio was pending
      endTimeoutMs: 3000,
      isLast: (m) => m.message_type === 'committed_transcript_with_timestamps',
      onMessage: (m, s) => {
        const type = typeof m.message_type === 'string' ? m.message_type : '';
        if (FAILURES.has(type)) return `the vendor reported ${type}`;
        if (HARMLESS.has(type)) return;
        const text = typeof m.text === 'string' ? m.text.trim() : '';
        if (type === 'partial_transcript' && text) s.transcript({ text, final: false, offsetMs: 0, durationMs: 0, direction });
        if (type === 'committed_transcript_with_timestamps' && text) {
          const words = (Array.isArray(m.words) ? (m.words as Word[]) : []).filter((w) => w.type !== 'spacing' && typeof w.start === 'number' && typeof w.end === 'number');
          const start = words.length ? words[0]!.start! : 0;
          const end = words.length ? words[words.length - 1]!.end! : start;
          s.transcript({ text, final: true, offsetMs: Math.round(start * 1000), durationMs: Math.max(0, Math.round((end - start) * 1000)), direction, endOfUtterance: true });
        }
      },
    };
    // base64 in JSON: about 1.4 bytes a byte of PCM; a 10 s backlog at most
    return new CloudSttStream(wire, egressOf(), rate * 2 * 14);
  }

  private config(): CloudEndpoint {
    return this.endpoint ?? endpointFromEnv('ELEVENLABS', 'https://api.elevenlabs.io');
  }
}
