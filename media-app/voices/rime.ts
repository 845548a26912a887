/**
 * Rime: HTTP streaming, POST {base}/v1/rime-tts, `Authorization: Bearer`, body { speaker, text,
 * modelId: 'mistv2' (their lowest-latency model), samplingRate, lang }. The format is the `Accept`
 * header: `audio/PCMU` (headerless µ-law 8 kHz, the telephony format), or `audio/L16` (headerless
 * 16-bit little-endian PCM) at 16000 for a wideband leg. Audio streams back as it is made.
 */
import { postStream } from './http-stream';
import { PcmToRate, ulawToPcm } from './pcm';
import type { VendorVoice, VoiceRequest } from './vendor';

/** Rime's three-letter language codes for the languages mistv2 speaks; others are left to its default. */
const LANG: Readonly<Record<string, string>> = { en: 'eng', es: 'spa', fr: 'fra', de: 'ger' };

export const rime: VendorVoice = {
  name: 'rime',
  pcmRate: 16_000,
  async *stream(req: VoiceRequest) {
    const wide = req.rate === 16000;
    const lang = LANG[req.language.slice(0, 2).toLowerCase()];
    const body = { speaker: req.voice || 'cove', text: req.text, modelId: 'mistv2', samplingRate: wide ? 16000 : 8000, ...(lang ? { lang } : {}) };
    const headers = { authorization: `Bearer ${req.apiKey}`, accept: wide ? 'audio/L16' : 'audio/PCMU' };
    const pcm = wide ? new PcmToRate(16000, 16000) : null;
    try {
      for await (const bytes of postStream('rime', `${req.baseUrl}/v1/rime-tts`, req, headers, body)) {
        const out = pcm ? pcm.push(bytes) : ulawToPcm(bytes);
        if (out.length) yield out;
      }
    } finally {
      pcm?.close();
    }
  },
};
