// PlayHT (HTTP streaming /api/v2/tts/stream, output_format mulaw at 8000) on a live call through its
// stand-in (testkit/vendors/playht.ts). The key is `<user id>:<API key>`: X-USER-ID and AUTHORIZATION.
import { expect } from 'chai';
import { startPlayHt } from '../../testkit/vendors/playht';
import { vendorVoiceSuite } from '../../testkit/ai/voice-calls';

vendorVoiceSuite(
  {
    vendor: 'playht',
    start: startPlayHt,
    env: (s) => ({ PLAYHT_BASE_URL: s.url, PLAYHT_USER_ID: 'playht-user', PLAYHT_API_KEY: 'playht-test-key' }),
    wrongKey: 'playht-user:playht-wrong-key-000000',
    refusal: 'the API key was refused (HTTP 401)',
    numberPrefix: '89922104',
  },
  ({ standIn, calls, llmUrl }) => {
    it('sends the user id and the key in their own headers and asks for mulaw 8000', async () => {
      const { number } = await calls.aiNumber(llmUrl(), 'playht');
      await calls.call(number);
      const r = standIn().requests.at(-1)!;
      expect(r.headers['x-user-id']).to.equal('playht-user');
      expect(r.headers.authorization).to.equal('playht-test-key');
      expect(r.headers.accept).to.equal('audio/basic');
      expect(r.body).to.deep.include({ output_format: 'mulaw', sample_rate: 8000, voice_engine: 'Play3.0-mini' });
    });
  },
);
