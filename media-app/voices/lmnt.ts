/**
 * LMNT: POST {base}/v1/ai/speech/bytes, key in `X-API-Key`, body { voice, text, format: 'raw',
 * sample_rate: 16000 }: 16-bit little-endian PCM streamed as it is made, resampled here to 8 kHz (16 kHz for a wideband leg).
 */
import { postStream } from './http-stream';
import { PcmToRate } from './pcm';
import type { VendorVoice, VoiceRequest } from './vendor';

export const lmnt: VendorVoice = {
  name: 'lmnt',
  pcmRate: 16_000,
  async *stream(req: VoiceRequest) {
    const pcm = new PcmToRate(16_000, req.rate ?? 8000);
    try {
      const body = { voice: req.voice || 'leah', text: req.text, format: 'raw', sample_rate: 16_000, language: req.language.slice(0, 2).toLowerCase() };
      for await (const bytes of postStream('lmnt', `${req.baseUrl}/v1/ai/speech/bytes`, req, { 'x-api-key': req.apiKey }, body)) {
        const out = pcm.push(bytes);
        if (out.length) yield out;
      }
    } finally {
      pcm.close();
    }
  },
};
