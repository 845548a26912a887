// Google Cloud Text-to-Speech stand-in (their REST reference): POST /v1/text:synthesize, key in
// `X-Goog-Api-Key` (a wrong one: HTTP 400 INVALID_ARGUMENT with reason API_KEY_INVALID, as Google
// answers), body { input: { text }, voice: { languageCode }, audioConfig: { audioEncoding,
// sampleRateHertz } }; answers JSON { audioContent } with a WAV file (MULAW 8000 or LINEAR16 at the rate) in base64.
import { httpStandIn, MARKER_HZ, toneMs, toneS16le, toneUlaw, type StandIn, type StandInOptions } from './marker';

/** A WAV file: format 1 (PCM, 16-bit) or 7 (µ-law, 8-bit), mono. */
export function wavFile(data: Buffer, rate: number, ulaw: boolean): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(ulaw ? 7 : 1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * (ulaw ? 1 : 2), 28);
  h.writeUInt16LE(ulaw ? 1 : 2, 32);
  h.writeUInt16LE(ulaw ? 8 : 16, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

export function startGoogleTts(options: StandInOptions = {}): Promise<StandIn> {
  const invalidKey = {
    status: 400,
    body: JSON.stringify({
      error: {
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }],
      },
    }),
  };
  return httpStandIn(
    options,
    (m, p) => m === 'POST' && p === '/v1/text:synthesize',
    (req) => (req.headers['x-goog-api-key'] === (options.apiKey ?? 'gg-test-key') ? true : invalidKey),
    (body) => {
      const b = body as { input?: { text?: unknown }; voice?: { languageCode?: unknown }; audioConfig?: { audioEncoding?: unknown; sampleRateHertz?: unknown } } | null;
      const text = b?.input?.text;
      if (typeof text !== 'string' || !text || typeof b?.voice?.languageCode !== 'string') return 'input.text and voice.languageCode are required';
      const enc = b.audioConfig?.audioEncoding;
      const rate = b.audioConfig?.sampleRateHertz;
      let wav: Buffer;
      if (enc === 'MULAW' && rate === 8000) wav = wavFile(toneUlaw(MARKER_HZ.google, toneMs(text)), 8000, true);
      else if (enc === 'LINEAR16' && (rate === 8000 || rate === 16000)) wav = wavFile(toneS16le(MARKER_HZ.google, toneMs(text), rate, rate === 16000 ? options.extraHz : undefined), rate, false);
      else return 'this stand-in models MULAW 8000 and LINEAR16 8000/16000 only';
      return { contentType: 'application/json; charset=UTF-8', bytes: Buffer.from(JSON.stringify({ audioContent: wav.toString('base64') })), chunk: 4096 };
    },
  );
}
