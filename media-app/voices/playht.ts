/**
 * PlayHT: HTTP streaming, POST {base}/api/v2/tts/stream, the user id in `X-USER-ID` and the API key in
 * `AUTHORIZATION`, `accept: audio/basic`, body { text, voice, voice_engine: 'Play3.0-mini',
 * output_format: 'mulaw', sample_rate: 8000 } (their telephony format); the audio streams back as it
 * is made. The key is `<user id>:<API key>` (PLAYHT_USER_ID and PLAYHT_API_KEY on the server).
 */
import { postStream } from './http-stream';
import { ulawToPcm } from './pcm';
import { keyPair, type VendorVoice, type VoiceRequest } from './vendor';

const DEFAULT_VOICE = 's3://voice-cloning-zero-shot/d9ff78ba-d016-47f6-b0ef-dd630f59414e/female-cs/manifest.json';

export const playht: VendorVoice = {
  name: 'playht',
  async *stream(req: VoiceRequest) {
    const { id, secret } = keyPair('playht', req.apiKey, '<user id>:<API key>');
    const headers = { 'x-user-id': id, authorization: secret, accept: 'audio/basic' };
    const body = { text: req.text, voice: req.voice || DEFAULT_VOICE, voice_engine: 'Play3.0-mini', output_format: 'mulaw', sample_rate: 8000 };
    for await (const bytes of postStream('playht', `${req.baseUrl}/api/v2/tts/stream`, req, headers, body)) yield ulawToPcm(bytes);
  },
};
