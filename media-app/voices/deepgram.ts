/**
 * Deepgram Aura: POST {base}/v1/speak?model=...&encoding=mulaw&sample_rate=8000&container=none, key
 * in `Authorization: Token`, body { text }. The audio streams back as it is made, µ-law 8 kHz
 * without a container. The voice is the model name (default aura-2-thalia-en).
 */
import { postStream } from './http-stream';
import { ulawToPcm } from './pcm';
import type { VendorVoice, VoiceRequest } from './vendor';

export const deepgram: VendorVoice = {
  name: 'deepgram',
  async *stream(req: VoiceRequest) {
    const q = new URLSearchParams({ model: req.voice || 'aura-2-thalia-en', encoding: 'mulaw', sample_rate: '8000', container: 'none' });
    for await (const bytes of postStream('deepgram', `${req.baseUrl}/v1/speak?${q.toString()}`, req, { authorization: `Token ${req.apiKey}` }, { text: req.text })) {
      yield ulawToPcm(bytes);
    }
  },
};
