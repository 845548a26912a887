// ai_talk's voice on a wideband leg (issue #34): the Speaker injects a cloud voice's linear PCM (LMNT's
// 16 kHz, OpenAI's 24 kHz; the vendors' stand-ins on loopback, their marker tone plus a 6 kHz one) into
// a G.722 leg at 16 kHz, so the far end hears the 6 kHz tone; on a PCMU leg it hears the marker without
// an alias of it, each measured over a second from the middle of what was heard of the voice. A local voice (espeak-ng, 22,050 Hz) through the Speaker keeps its energy above 4 kHz.
import { expect } from 'chai';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { voiceVendorsFromEnv } from '../../core/speech/vendors';
import type { Endpoint, MediaServer } from '../../media-engine';
import { goertzelCoeff, goertzelPower } from '../../media-engine/dsp/goertzel';
import { Speaker, type VoiceChoice } from '../../media-app/voices/speaker';
import { MARKER_HZ, type StandIn } from '../../testkit/vendors/marker';
import { startLmnt } from '../../testkit/vendors/lmnt';
import { startOpenAiSpeech } from '../../testkit/vendors/openai';
import { AWS_TEST_KEY_ID, AWS_TEST_SECRET, startPolly } from '../../testkit/vendors/aws';
import { startGoogleTts } from '../../testkit/vendors/google';
import { startRime } from '../../testkit/vendors/rime';
import { useMediaServer } from '../../testkit/media-engine/support';
import { power, toneShare, useToneLegs, voicedMiddle } from '../../testkit/media-engine/far-end';

/** The share (0..1) of 16 kHz `x`'s energy between `lo` and `hi` Hz (50 Hz bins of 20 ms blocks). */
function bandShare(x: Int16Array, lo: number, hi: number): number {
  let band = 0;
  let all = 0;
  for (let b = 0; b + 320 <= x.length; b += 320) {
    for (let i = b; i < b + 320; i++) all += x[i] * x[i];
    for (let hz = lo; hz <= hi; hz += 50) band += (2 * goertzelPower(x, b, 320, goertzelCoeff(hz, 16000))) / 320;
  }
  return all ? band / all : 0;
}

describe('ai: a voice spoken into a wideband leg', function () {
  this.timeout(60_000);
  let ms: MediaServer;
  let dir: string;
  let lmnt: StandIn;
  let openai: StandIn;
  let aws: StandIn;
  let google: StandIn;
  let rime: StandIn;
  useMediaServer({ ports: 100, workers: 1 }, (f) => ({ ms, dir } = f));
  before(async () => {
    lmnt = await startLmnt({ extraHz: 6000 });
    openai = await startOpenAiSpeech({ extraHz: 6000 });
    aws = await startPolly({ extraHz: 6000 });
    google = await startGoogleTts({ extraHz: 6000 });
    rime = await startRime({ extraHz: 6000 });
  });
  after(async () => {
    await lmnt?.close();
    await openai?.close();
    await aws?.close();
    await google?.close();
    await rime?.close();
  });

  const { leg } = useToneLegs(() => ms);

  function speaker(ep: Endpoint, choice: VoiceChoice): Speaker {
    return new Speaker(ep, choice, null, 'en-US', 5000, {
      egress: new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' })),
      vendors: voiceVendorsFromEnv({
        LMNT_BASE_URL: lmnt.url,
        LMNT_API_KEY: 'lmnt-test-key',
        OPENAI_BASE_URL: `${openai.url}/v1`,
        OPENAI_API_KEY: 'sk-openai-test',
        AWS_BASE_URL: aws.url,
        AWS_ACCESS_KEY_ID: AWS_TEST_KEY_ID,
        AWS_SECRET_ACCESS_KEY: AWS_TEST_SECRET,
        GOOGLE_BASE_URL: google.url,
        GOOGLE_API_KEY: 'gg-test-key',
        RIME_BASE_URL: rime.url,
        RIME_API_KEY: 'rime-test-key',
      }),
      cacheDir: dir,
      onFallback: () => undefined,
    });
  }

  // a sentence of about 2.5 s of tone (the stand-ins' 40 ms a character)
  const TEXT = 'The quick brown fox jumps over the lazy dog, twice.';

  // aws, google and rime are asked for 16 kHz itself on the wideband leg (PCM at 8000 / µ-law on the narrow one)
  for (const vendor of ['lmnt', 'openai', 'aws', 'google', 'rime'] as const) {
    it(`${vendor}: its PCM reaches a G.722 leg at 16 kHz (the 6 kHz tone), a PCMU leg at 8 kHz without an alias`, async () => {
      const wide = await leg('G722');
      const s = speaker(wide.leg, { type: vendor, voice: '', key: '' });
      await s.speak(TEXT, new AbortController().signal);
      // a second from the middle of the voice (the sentence is about 2 s)
      const heard = voicedMiddle(wide.far.lastHeard(4), 16000, 1);
      if (!heard) return expect.fail('a second of voice heard on the G.722 leg');
      expect(power(heard), 'the voice is heard').to.be.greaterThan(1e5);
      expect(toneShare(heard, 6000, 16000), 'its 6 kHz tone').to.be.greaterThan(0.2);
      expect(toneShare(heard, MARKER_HZ[vendor], 16000), 'its marker').to.be.greaterThan(0.2);
      await s.stop();

      const narrow = await leg('PCMU');
      const n = speaker(narrow.leg, { type: vendor, voice: '', key: '' });
      await n.speak(TEXT, new AbortController().signal);
      const nb = voicedMiddle(narrow.far.lastHeard(4), 8000, 1);
      if (!nb) return expect.fail('a second of voice heard on the PCMU leg');
      expect(toneShare(nb, MARKER_HZ[vendor], 8000), 'the marker at 8 kHz').to.be.greaterThan(0.8);
      expect(toneShare(nb, 2000, 8000), 'no alias of the 6 kHz tone').to.be.lessThan(0.01);
      await n.stop();
    });
  }

  it('a local voice (espeak-ng) through the Speaker keeps its energy above 4 kHz on a G.722 leg', async () => {
    const wide = await leg('G722');
    const s = speaker(wide.leg, { type: 'espeak-ng', voice: '', key: '' });
    await s.speak('Six sharp sisters sell fresh seashells; success is certain, says Sue.', new AbortController().signal);
    const heard = wide.far.lastHeard(3);
    expect(power(heard), 'speech is heard').to.be.greaterThan(1e5);
    expect(bandShare(heard, 4500, 7500), 'energy between 4.5 and 7.5 kHz').to.be.greaterThan(0.01);
    await s.stop();
  });
});
