// Rime stand-in (their Mist v2 streaming HTTP reference): POST /v1/rime-tts, `Authorization: Bearer <key>`,
// body { speaker, text, modelId, samplingRate }; the format is the Accept header: audio/PCMU (headerless
// µ-law, 8000) or audio/L16 (headerless 16-bit little-endian PCM at samplingRate).
import { httpStandIn, MARKER_HZ, toneMs, toneS16le, toneUlaw, type StandIn, type StandInOptions } from './marker';

export function startRime(options: StandInOptions = {}): Promise<StandIn> {
  return httpStandIn(
    options,
    (m, p) => m === 'POST' && p === '/v1/rime-tts',
    (req) => req.headers.authorization === `Bearer ${options.apiKey ?? 'rime-test-key'}`,
    (body, _q, req) => {
      const b = body as { text?: unknown; speaker?: unknown; modelId?: unknown; samplingRate?: unknown } | null;
      if (typeof b?.text !== 'string' || !b.text || typeof b.speaker !== 'string') return 'text and speaker are required';
      const accept = req.headers.accept;
      if (accept === 'audio/PCMU' && (b.samplingRate ?? 8000) === 8000) return { contentType: 'audio/PCMU', bytes: toneUlaw(MARKER_HZ.rime, toneMs(b.text)), chunk: 160 };
      if (accept === 'audio/L16' && (b.samplingRate === 8000 || b.samplingRate === 16000)) {
        return { contentType: 'audio/L16', bytes: toneS16le(MARKER_HZ.rime, toneMs(b.text), b.samplingRate, b.samplingRate === 16000 ? options.extraHz : undefined), chunk: 641 };
      }
      return 'this stand-in models Accept audio/PCMU at 8000 and audio/L16 at 8000/16000 only';
    },
  );
}
