// OpenAI speech stand-in (their API reference): POST /v1/audio/speech, `Authorization: Bearer <key>`,
// body { model, input, voice, response_format }; 'pcm' answers raw 24 kHz 16-bit little-endian mono.
import { httpStandIn, MARKER_HZ, toneMs, toneS16le, type StandIn, type StandInOptions } from './marker';

export function startOpenAiSpeech(options: StandInOptions = {}): Promise<StandIn> {
  return httpStandIn(
    options,
    (m, p) => m === 'POST' && p === '/v1/audio/speech',
    (req) => req.headers.authorization === `Bearer ${options.apiKey ?? 'sk-openai-test'}`,
    (body) => {
      const b = body as { input?: unknown; response_format?: unknown; voice?: unknown } | null;
      if (typeof b?.input !== 'string' || !b.input || typeof b.voice !== 'string') return 'input and voice are required';
      if (b.response_format !== 'pcm') return 'this stand-in models response_format pcm only';
      // an odd chunk size, as a network splits it: the adapter must carry half samples
      return { contentType: 'audio/pcm', bytes: toneS16le(MARKER_HZ.openai, toneMs(b.input), 24_000, options.extraHz), chunk: 961 };
    },
  );
}
