/**
 * Google Cloud Text-to-Speech, REST `POST {base}/v1/text:synthesize`, key in `X-Goog-Api-Key`, body
 * { input: { text }, voice: { languageCode, name? }, audioConfig: { audioEncoding, sampleRateHertz } }:
 * MULAW at 8000 (the telephony format), LINEAR16 at 16000 for a wideband leg. The answer is JSON with
 * the whole utterance base64 in `audioContent` (a WAV file: its header is skipped here). Google's
 * streaming synthesis (StreamingSynthesize) is gRPC only, and no gRPC client ships with this
 * platform; REST is the fastest mode reachable here (docs/ai.md "Voices").
 *
 * A refused key is HTTP 400 with reason API_KEY_INVALID (403 PERMISSION_DENIED for a key without
 * access): both are an auth error here.
 */
import { netError } from './http-stream';
import { PcmToRate, ulawToPcm } from './pcm';
import { statusError, VoiceError, type VendorVoice, type VoiceRequest } from './vendor';

interface GoogleAnswer {
  audioContent?: unknown;
  error?: { status?: unknown; details?: { reason?: unknown }[] };
}

/** The `data` chunk of a RIFF/WAVE file (the whole buffer when it is not one). */
export function wavData(b: Buffer): Buffer {
  if (b.length < 12 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WAVE') return b;
  for (let o = 12; o + 8 <= b.length;) {
    const id = b.toString('latin1', o, o + 4);
    const size = b.readUInt32LE(o + 4);
    if (id === 'data') return b.subarray(o + 8, Math.min(b.length, o + 8 + size));
    o += 8 + size + (size % 2);
  }
  throw new VoiceError('google', 'failed', 'the audio has no data chunk');
}

export const google: VendorVoice = {
  name: 'google',
  pcmRate: 16_000,
  async *stream(req: VoiceRequest) {
    const wide = req.rate === 16000;
    const body = {
      input: { text: req.text },
      voice: { languageCode: req.language, ...(req.voice ? { name: req.voice } : {}) },
      audioConfig: wide ? { audioEncoding: 'LINEAR16', sampleRateHertz: 16000 } : { audioEncoding: 'MULAW', sampleRateHertz: 8000 },
    };
    let res;
    try {
      res = await req.egress.open(`${req.baseUrl}/v1/text:synthesize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': req.apiKey },
        body: JSON.stringify(body),
        timeoutMs: 60_000,
        maxBytes: 32 * 1024 * 1024,
        signal: req.signal,
      });
    } catch (e) {
      throw netError('google', e);
    }
    let answer: GoogleAnswer;
    try {
      const chunks: Buffer[] = [];
      try {
        for await (const c of res.body) chunks.push(c);
      } catch (e) {
        throw netError('google', e);
      }
      try {
        answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as GoogleAnswer;
      } catch {
        throw res.status === 200 ? new VoiceError('google', 'failed', 'the vendor sent an answer that is not JSON') : statusError('google', res.status);
      }
    } finally {
      res.close();
    }
    if (res.status !== 200) {
      if (res.status === 400 && answer.error?.details?.some((d) => d?.reason === 'API_KEY_INVALID')) throw new VoiceError('google', 'auth', 'the API key was refused (HTTP 400 API_KEY_INVALID)');
      throw statusError('google', res.status);
    }
    if (typeof answer.audioContent !== 'string') throw new VoiceError('google', 'failed', 'the answer has no audioContent');
    const audio = wavData(Buffer.from(answer.audioContent, 'base64'));
    if (!wide) {
      yield ulawToPcm(audio);
      return;
    }
    const pcm = new PcmToRate(16000, 16000);
    try {
      yield pcm.push(audio);
    } finally {
      pcm.close();
    }
  },
};
