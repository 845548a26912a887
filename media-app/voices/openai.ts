/**
 * OpenAI: POST {base}/audio/speech (base https://api.openai.com/v1, as in their SDK), `Authorization: Bearer`, body { model, input, voice,
 * response_format: 'pcm' }. OpenAI offers no telephony format; 'pcm' is raw 24 kHz 16-bit
 * little-endian mono, streamed as it is made (their lowest-latency format), resampled here to 8 kHz (16 kHz for a wideband leg).
 */
import { postStream } from './http-stream';
import { PcmToRate } from './pcm';
import type { VendorVoice, VoiceRequest } from './vendor';

export const openai: VendorVoice = {
  name: 'openai',
  pcmRate: 24_000,
  async *stream(req: VoiceRequest) {
    const pcm = new PcmToRate(24_000, req.rate ?? 8000);
    try {
      const body = { model: 'gpt-4o-mini-tts', input: req.text, voice: req.voice || 'alloy', response_format: 'pcm' };
      for await (const bytes of postStream('openai', `${req.baseUrl}/audio/speech`, req, { authorization: `Bearer ${req.apiKey}` }, body)) {
        const out = pcm.push(bytes);
        if (out.length) yield out;
      }
    } finally {
      pcm.close();
    }
  },
};
