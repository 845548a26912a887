/**
 * Azure AI Speech: POST {base}/cognitiveservices/v1 (base https://<region>.tts.speech.microsoft.com),
 * key in `Ocp-Apim-Subscription-Key`, body SSML (`application/ssml+xml`), output format by header
 * `X-Microsoft-OutputFormat: raw-8khz-8bit-mono-mulaw` (the telephony format, no container); the
 * audio is streamed back as it is made. The text is XML-escaped into the SSML, so a caller's words
 * cannot add markup.
 */
import { postStream } from './http-stream';
import { ulawToPcm } from './pcm';
import type { VendorVoice, VoiceRequest } from './vendor';

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

export const azure: VendorVoice = {
  name: 'azure',
  async *stream(req: VoiceRequest) {
    const ssml = `<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="${xml(req.language)}"><voice name="${xml(req.voice || 'en-US-AvaMultilingualNeural')}">${xml(req.text)}</voice></speak>`;
    const headers = {
      'content-type': 'application/ssml+xml',
      'ocp-apim-subscription-key': req.apiKey,
      'x-microsoft-outputformat': 'raw-8khz-8bit-mono-mulaw',
      'user-agent': 'openvoice',
    };
    for await (const bytes of postStream('azure', `${req.baseUrl}/cognitiveservices/v1`, req, headers, ssml)) yield ulawToPcm(bytes);
  },
};
