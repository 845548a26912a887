// ElevenLabs stand-in (their API reference): POST /v1/text-to-speech/{voice_id}/stream?output_format=...,
// `xi-api-key`, body { text, model_id }; answers µ-law 8 kHz for ulaw_8000 (and refuses formats it
// does not model), 401 for a wrong key, 422 without text.
import { httpStandIn, MARKER_HZ, toneMs, toneUlaw, type StandIn, type StandInOptions } from './marker';

export function startElevenLabs(options: StandInOptions = {}): Promise<StandIn> {
  return httpStandIn(
    options,
    (m, p) => m === 'POST' && /^\/v1\/text-to-speech\/[^/]+\/stream$/.test(p),
    (req) => req.headers['xi-api-key'] === (options.apiKey ?? 'el-test-key'),
    (body, q) => {
      const text = (body as { text?: unknown } | null)?.text;
      if (typeof text !== 'string' || !text) return 'text is required';
      if (q.get('output_format') !== 'ulaw_8000') return 'this stand-in models output_format=ulaw_8000 only';
      return { contentType: 'audio/basic', bytes: toneUlaw(MARKER_HZ.elevenlabs, toneMs(text)), chunk: 160 };
    },
  );
}
