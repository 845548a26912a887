// Google Cloud Text-to-Speech (REST v1/text:synthesize; its streaming synthesis is gRPC only) on a live
// call through its stand-in (testkit/vendors/google.ts): MULAW 8000 with the WAV header skipped; a
// wrong `X-Goog-Api-Key` is Google's 400 API_KEY_INVALID, read as a refused key.
import { expect } from 'chai';
import { startGoogleTts } from '../../testkit/vendors/google';
import { vendorVoiceSuite } from '../../testkit/ai/voice-calls';

vendorVoiceSuite(
  {
    vendor: 'google',
    start: startGoogleTts,
    env: (s) => ({ GOOGLE_BASE_URL: s.url, GOOGLE_API_KEY: 'gg-test-key' }),
    wrongKey: 'AIzaWrongKey-0000000000000000',
    refusal: 'the API key was refused (HTTP 400 API_KEY_INVALID)',
    numberPrefix: '89922102',
  },
  ({ standIn, calls, llmUrl }) => {
    it('asks for MULAW at 8000 in the call language, the key in X-Goog-Api-Key (not the URL)', async () => {
      const { number } = await calls.aiNumber(llmUrl(), 'google');
      await calls.call(number);
      const r = standIn().requests.at(-1)!;
      expect(r.url).to.equal('/v1/text:synthesize');
      expect(r.headers['x-goog-api-key']).to.equal('gg-test-key');
      expect(r.body).to.deep.include({ audioConfig: { audioEncoding: 'MULAW', sampleRateHertz: 8000 } });
      expect((r.body as { voice: { languageCode: string } }).voice.languageCode).to.match(/^[a-z]{2}-[A-Z]{2}$/);
    });
  },
);
