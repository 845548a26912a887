/**
 * ElevenLabs: POST {base}/v1/text-to-speech/{voice_id}/stream?output_format=ulaw_8000, key in
 * `xi-api-key`, body { text, model_id }. The answer is the audio itself, chunked as it is made:
 * µ-law 8 kHz, the telephony format, so it needs no conversion. Model eleven_flash_v2_5 (their
 * lowest-latency model).
 */
import { postStream } from './http-stream';
import { ulawToPcm } from './pcm';
import type { VendorVoice, VoiceRequest } from './vendor';

const DEFAULT_VOICE = '21m00Tcm4TlvDq8ikWAM';

export const elevenlabs: VendorVoice = {
  name: 'elevenlabs',
  async *stream(req: VoiceRequest) {
    const url = `${req.baseUrl}/v1/text-to-speech/${encodeURIComponent(req.voice || DEFAULT_VOICE)}/stream?output_format=ulaw_8000`;
    const lang = req.language.slice(0, 2).toLowerCase();
    for await (const bytes of postStream('elevenlabs', url, req, { 'xi-api-key': req.apiKey, accept: 'audio/basic' }, { text: req.text, model_id: 'eleven_flash_v2_5', language_code: lang })) {
      yield ulawToPcm(bytes);
    }
  },
};
