// Prompts and TTS at a wideband leg's rate (issue #34): a 16 kHz WAV (and 22.05, 24, 44.1 and 48 kHz
// ones) played to a G.722 leg reaches its far end with a 6 kHz tone in it, which only a path that never
// went through 8 kHz keeps; the same prompt played to a PCMU leg has none of it (nor its alias), only
// the 1 kHz part. espeak-ng's speech (22,050 Hz) said to a G.722 leg keeps its sibilants above 4 kHz.
import path from 'node:path';
import { expect } from 'chai';
import type { Endpoint, MediaServer } from '../../media-engine';
import { writeWav } from '../../media-engine/audio/wav';
import { goertzelCoeff, goertzelPower } from '../../media-engine/dsp/goertzel';
import { readWav, sleep, useMediaServer } from '../../testkit/media-engine/support';
import { power, ToneFarEnd, toneShare, type FarCodec } from '../../testkit/media-engine/far-end';

/** `seconds` of a 6 kHz tone (amplitude 8000) plus a 1 kHz one (6000) at `rate`. */
function toneWav(file: string, rate: number, seconds = 3): string {
  const x = new Int16Array(rate * seconds);
  for (let i = 0; i < x.length; i++) x[i] = Math.round(8000 * Math.sin((2 * Math.PI * 6000 * i) / rate) + 6000 * Math.sin((2 * Math.PI * 1000 * i) / rate));
  writeWav(file, x, rate);
  return file;
}

/** The share (0..1) of `x`'s energy between `lo` and `hi` Hz (16 kHz audio, 50 Hz bins of 20 ms blocks). */
function bandShare(x: Int16Array, lo: number, hi: number): number {
  const n = 320;
  let band = 0;
  let all = 0;
  for (let b = 0; b + n <= x.length; b += n) {
    for (let i = b; i < b + n; i++) all += x[i] * x[i];
    for (let hz = lo; hz <= hi; hz += 50) band += (2 * goertzelPower(x, b, n, goertzelCoeff(hz, 16000))) / n;
  }
  return all ? band / all : 0;
}

describe('media-engine prompts and TTS at a wideband leg rate', function () {
  this.timeout(60000);
  let ms: MediaServer;
  let dir: string;
  useMediaServer({ ports: 100, workers: 1, cache: true }, (f) => ({ ms, dir } = f));

  const fars: ToneFarEnd[] = [];
  const eps: Endpoint[] = [];
  afterEach(async () => {
    for (const f of fars.splice(0)) f.close();
    for (const e of eps.splice(0)) await e.destroy();
  });

  async function leg(codec: FarCodec): Promise<{ far: ToneFarEnd; leg: Endpoint }> {
    const far = await new ToneFarEnd(codec).open();
    fars.push(far);
    const ep = await ms.createEndpoint({ remoteSdp: far.offer });
    eps.push(ep);
    expect(ep.local.sdp).to.contain(codec === 'G722' ? 'G722/8000' : 'PCMU/8000');
    far.sendTo(ep.local.port);
    return { far, leg: ep };
  }

  /** What the far end hears of the prompt: 1.5 s taken while it still plays. */
  async function heardWhilePlaying(m: { far: ToneFarEnd; leg: Endpoint }, file: string): Promise<Int16Array> {
    const played = m.leg.play(file);
    await sleep(2200);
    const heard = m.far.lastHeard(1.5);
    await played;
    return heard;
  }

  for (const rate of [16000, 22050, 24000, 44100, 48000]) {
    it(`a ${rate} Hz WAV played to a G.722 leg keeps its 6 kHz tone`, async () => {
      const file = toneWav(path.join(dir, `tones-${rate}.wav`), rate);
      const heard = await heardWhilePlaying(await leg('G722'), file);
      expect(power(heard), 'the prompt is heard').to.be.greaterThan(1e6);
      expect(toneShare(heard, 6000, 16000), 'the 6 kHz tone').to.be.greaterThan(0.4);
      expect(toneShare(heard, 1000, 16000), 'the 1 kHz tone').to.be.greaterThan(0.2);
    });
  }

  it('the same 16 kHz WAV played to a PCMU leg has only the 1 kHz tone', async () => {
    const file = toneWav(path.join(dir, 'tones-pcmu.wav'), 16000);
    const heard = await heardWhilePlaying(await leg('PCMU'), file);
    expect(power(heard), 'the prompt is heard').to.be.greaterThan(1e6);
    expect(toneShare(heard, 1000, 8000), 'the 1 kHz tone').to.be.greaterThan(0.8);
    expect(toneShare(heard, 2000, 8000), 'no alias of the 6 kHz tone').to.be.lessThan(0.01);
  });

  it('an 8 kHz WAV played to a G.722 leg is heard as before (nothing above 4 kHz)', async () => {
    const x = new Int16Array(8000 * 3);
    for (let i = 0; i < x.length; i++) x[i] = Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / 8000));
    const file = path.join(dir, 'tone-8k.wav');
    writeWav(file, x, 8000);
    const heard = await heardWhilePlaying(await leg('G722'), file);
    expect(toneShare(heard, 1000, 16000)).to.be.greaterThan(0.8);
    expect(bandShare(heard, 4500, 7500)).to.be.lessThan(0.001);
  });

  it('a 16 kHz WAV played to an Opus leg reaches the far engine leg with its 6 kHz tone (recorded at 16 kHz there)', async () => {
    const file = toneWav(path.join(dir, 'tones-opus.wav'), 16000);
    const a = await ms.createEndpoint({ codecs: ['opus'] });
    eps.push(a);
    const b = await ms.createEndpoint({ remoteSdp: a.local.sdp });
    eps.push(b);
    await a.modify(b.local.sdp);
    expect(b.local.sdp).to.contain('opus/48000/2');
    const played = a.play(file);
    await sleep(500);
    const rec = await b.record(path.join(dir, 'opus-heard.wav'), { duration: 1.5 });
    await played;
    const wav = readWav(rec.path);
    expect(wav.rate, 'an Opus leg records at 16 kHz').to.equal(16000);
    expect(toneShare(wav.samples, 6000, 16000), 'the 6 kHz tone crossed Opus').to.be.greaterThan(0.3);
    expect(toneShare(wav.samples, 1000, 16000), 'and the 1 kHz one').to.be.greaterThan(0.15);
  });

  it("espeak-ng's speech said to a G.722 leg keeps its energy above 4 kHz", async () => {
    const text = 'Six sharp sisters sell fresh seashells; success is certain, says Sue.';
    const wide = await leg('G722');
    const said = wide.leg.say(text);
    const r = await said;
    expect(r.playbackMilliseconds).to.be.greaterThan(2000);
    await sleep(300);
    const heard = wide.far.lastHeard(r.playbackMilliseconds / 1000 + 0.3);
    expect(power(heard), 'speech is heard').to.be.greaterThan(1e5);
    const share = bandShare(heard, 4500, 7500);
    expect(share, 'energy between 4.5 and 7.5 kHz').to.be.greaterThan(0.01);
  });
});
