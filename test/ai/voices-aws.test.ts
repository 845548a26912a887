// Amazon Polly through AWS's SDK on a live call: the stand-in (testkit/vendors/aws.ts) recomputes every
// request's SigV4 signature from the request as received, so a heard marker tone means the SDK signed
// it right for the region; a wrong secret is Polly's 403 InvalidSignatureException → a clear flow
// error and an aicall_tts_failed event. The key is `<access key id>:<secret>` (AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY on the server).
import { expect } from 'chai';
import { AWS_TEST_KEY_ID, AWS_TEST_SECRET, startPolly } from '../../testkit/vendors/aws';
import { heardPackets, vendorVoiceSuite } from '../../testkit/ai/voice-calls';

vendorVoiceSuite(
  {
    vendor: 'aws',
    start: (o) => startPolly({ ...o, region: 'eu-west-1' }),
    env: (s) => ({ AWS_BASE_URL: s.url, AWS_ACCESS_KEY_ID: AWS_TEST_KEY_ID, AWS_SECRET_ACCESS_KEY: AWS_TEST_SECRET, AWS_REGION: 'eu-west-1' }),
    wrongKey: `${AWS_TEST_KEY_ID}:wrong/secret+access/key00000000000000000`,
    refusal: 'the API key was refused (HTTP 403)',
    numberPrefix: '89922101',
  },
  ({ standIn, calls, llmUrl }) => {
    it('the request the stand-in accepted is SigV4-signed for polly in the configured region, PCM at 8000, engine neural', async () => {
      const { number } = await calls.aiNumber(llmUrl(), 'aws');
      await calls.call(number);
      const r = standIn().requests.at(-1)!;
      expect(String(r.headers.authorization)).to.match(
        new RegExp(`^AWS4-HMAC-SHA256 Credential=${AWS_TEST_KEY_ID}/\\d{8}/eu-west-1/polly/aws4_request, ?SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, ?Signature=[0-9a-f]{64}$`),
      );
      expect(String(r.headers.authorization)).to.not.include(AWS_TEST_SECRET);
      expect(r.body).to.deep.include({ Engine: 'neural', OutputFormat: 'pcm', SampleRate: '8000', VoiceId: 'Joanna' });
    });

    it('an unknown access key id (403 UnrecognizedClientException) and a key without its secret part: errors, nothing spoken', async () => {
      for (const [key, says] of [
        ['AKIDNOTKNOWN0000000:whatever-secret-value', 'the API key was refused (HTTP 403)'],
        ['just-one-part-no-colon', 'the key must be "<access key id>:<secret access key>"'],
      ] as const) {
        const { db, cid, number } = await calls.aiNumber(llmUrl(), 'aws', { tts_key: key });
        const tones = await calls.call(number);
        expect(heardPackets(tones)).to.equal(0);
        const { af } = await calls.aiEnd(db, cid);
        expect(af.error).to.include(`aws: ${says}`);
        expect(af.error).to.not.include(key.slice(-10));
      }
    });
  },
);
