// Deepgram Aura stand-in (their API reference): POST /v1/speak?model=&encoding=mulaw&sample_rate=8000&container=none,
// `Authorization: Token <key>`, body { text }; answers raw µ-law 8 kHz, 401 for a wrong key.
import { httpStandIn, MARKER_HZ, toneMs, toneUlaw, type StandIn, type StandInOptions } from './marker';

export function startDeepgramSpeak(options: StandInOptions = {}): Promise<StandIn> {
  return httpStandIn(
    options,
    (m, p) => m === 'POST' && p === '/v1/speak',
    (req) => req.headers.authorization === `Token ${options.apiKey ?? 'dg-test-key'}`,
    (body, q) => {
      const text = (body as { text?: unknown } | null)?.text;
      if (typeof text !== 'string' || !text) return 'text is required';
      if (q.get('encoding') !== 'mulaw' || q.get('sample_rate') !== '8000' || q.get('container') !== 'none') return 'this stand-in models mulaw 8000 without a container only';
      return { contentType: 'audio/mulaw', bytes: toneUlaw(MARKER_HZ.deepgram, toneMs(text)), chunk: 160 };
    },
  );
}
