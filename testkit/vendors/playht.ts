// PlayHT stand-in (their HTTP streaming reference): POST /api/v2/tts/stream, `X-USER-ID` and `AUTHORIZATION`
// (the API key), body { text, voice, voice_engine, output_format, sample_rate }; output_format mulaw at
// 8000 with `accept: audio/basic` answers headerless µ-law.
import { httpStandIn, MARKER_HZ, toneMs, toneUlaw, type StandIn, type StandInOptions } from './marker';

export interface PlayHtStandInOptions extends StandInOptions {
  userId?: string;
}

export function startPlayHt(options: PlayHtStandInOptions = {}): Promise<StandIn> {
  return httpStandIn(
    options,
    (m, p) => m === 'POST' && p === '/api/v2/tts/stream',
    (req) =>
      req.headers['x-user-id'] === (options.userId ?? 'playht-user') && req.headers.authorization === (options.apiKey ?? 'playht-test-key')
        ? true
        : { status: 401, body: JSON.stringify({ error_message: 'Invalid credentials', error_id: 'UNAUTHORIZED' }) },
    (body, _q, req) => {
      const b = body as { text?: unknown; voice?: unknown; output_format?: unknown; sample_rate?: unknown; voice_engine?: unknown } | null;
      if (typeof b?.text !== 'string' || !b.text || typeof b.voice !== 'string') return 'text and voice are required';
      if (b.output_format !== 'mulaw' || b.sample_rate !== 8000 || req.headers.accept !== 'audio/basic') return 'this stand-in models output_format mulaw at 8000 (accept audio/basic) only';
      return { contentType: 'audio/basic', bytes: toneUlaw(MARKER_HZ.playht, toneMs(b.text)), chunk: 160 };
    },
  );
}
