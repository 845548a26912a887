// LMNT stand-in (their API reference): POST /v1/ai/speech/bytes, `X-API-Key`, body { voice, text, format,
// sample_rate }; 'raw' answers 16-bit little-endian PCM at sample_rate (16000 modelled here).
import { httpStandIn, MARKER_HZ, toneMs, toneS16le, type StandIn, type StandInOptions } from './marker';

export function startLmnt(options: StandInOptions = {}): Promise<StandIn> {
  return httpStandIn(
    options,
    (m, p) => m === 'POST' && p === '/v1/ai/speech/bytes',
    (req) => req.headers['x-api-key'] === (options.apiKey ?? 'lmnt-test-key'),
    (body) => {
      const b = body as { text?: unknown; voice?: unknown; format?: unknown; sample_rate?: unknown } | null;
      if (typeof b?.text !== 'string' || !b.text || typeof b.voice !== 'string') return 'text and voice are required';
      if (b.format !== 'raw' || b.sample_rate !== 16_000) return 'this stand-in models format raw at 16000 only';
      return { contentType: 'application/octet-stream', bytes: toneS16le(MARKER_HZ.lmnt, toneMs(b.text), 16_000, options.extraHz), chunk: 641 };
    },
  );
}
