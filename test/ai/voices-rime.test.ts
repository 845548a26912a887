// Rime (streaming HTTP /v1/rime-tts, Accept audio/PCMU: headerless µ-law 8 kHz) on a live call through
// its stand-in (testkit/vendors/rime.ts); a wrong Bearer key is a 401.
import { expect } from 'chai';
import { startRime } from '../../testkit/vendors/rime';
import { vendorVoiceSuite } from '../../testkit/ai/voice-calls';

vendorVoiceSuite(
  {
    vendor: 'rime',
    start: startRime,
    env: (s) => ({ RIME_BASE_URL: s.url, RIME_API_KEY: 'rime-test-key' }),
    wrongKey: 'rime-wrong-key-0000000000',
    refusal: 'the API key was refused (HTTP 401)',
    numberPrefix: '89922103',
  },
  ({ standIn, calls, llmUrl }) => {
    it('asks for audio/PCMU at 8000 with model mistv2 and a speaker', async () => {
      const { number } = await calls.aiNumber(llmUrl(), 'rime');
      await calls.call(number);
      const r = standIn().requests.at(-1)!;
      expect(r.headers.accept).to.equal('audio/PCMU');
      expect(r.body).to.deep.include({ modelId: 'mistv2', samplingRate: 8000, speaker: 'cove', lang: 'eng' });
    });
  },
);
