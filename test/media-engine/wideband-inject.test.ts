// Audio a fork injects into a wideband leg (issue #34): media streams' return audio and ai_talk's
// voice go back into the call through a fork. On a G.722 leg a 16 kHz injection keeps its 6 kHz tone,
// and what the leg sends under it (a G.722 bridge peer's 6 kHz tone) stays 16 kHz while an 8 kHz
// injection is mixed on top; a PCMU leg gets a 16 kHz injection at 8 kHz without an alias.
import { expect } from 'chai';
import type { InjectRate, MediaServer } from '../../media-engine';
import { sleep, useMediaServer } from '../../testkit/media-engine/support';
import { power, toneShare, useToneLegs, type FarCodec } from '../../testkit/media-engine/far-end';

/** `seconds` of tones (Hz, amplitude) at `rate`. */
function tones(rate: number, seconds: number, parts: [number, number][]): Int16Array {
  const x = new Int16Array(rate * seconds);
  for (let i = 0; i < x.length; i++) {
    let v = 0;
    for (const [hz, amp] of parts) v += amp * Math.sin((2 * Math.PI * hz * i) / rate);
    x[i] = Math.round(v);
  }
  return x;
}

describe('media-engine fork injection into wideband legs', function () {
  this.timeout(40000);
  let ms: MediaServer;
  useMediaServer({ ports: 100, workers: 1 }, (f) => ({ ms } = f));

  const { leg } = useToneLegs(() => ms);

  /** A `codec` leg's fork injects 3 s of 16 kHz audio (a 6 kHz and a 1 kHz tone); its far end's last 1.5 s once 2.2 s went by. */
  async function inject16k(codec: FarCodec) {
    const a = await leg(codec);
    const fork = await a.leg.forkAudioStart({ mix: 'in', onFrame: () => undefined });
    fork.inject(
      tones(16000, 3, [
        [6000, 8000],
        [1000, 6000],
      ]),
      16000,
    );
    await sleep(2200);
    return { heard: a.far.lastHeard(1.5), stop: () => a.leg.forkAudioStop(fork) };
  }

  it('a 16 kHz injection into a G.722 leg keeps its 6 kHz tone', async () => {
    const { heard, stop } = await inject16k('G722');
    expect(power(heard), 'the injected audio is heard').to.be.greaterThan(1e6);
    expect(toneShare(heard, 6000, 16000), 'its 6 kHz tone').to.be.greaterThan(0.4);
    expect(toneShare(heard, 1000, 16000), 'its 1 kHz tone').to.be.greaterThan(0.2);
    await stop();
  });

  it('an 8 kHz injection into a G.722 leg bridged to a G.722 peer leaves the peer at 16 kHz', async () => {
    const a = await leg('G722');
    const b = await leg('G722');
    await a.leg.bridge(b.leg);
    const fork = await a.leg.forkAudioStart({ mix: 'in', onFrame: () => undefined });
    const sending = b.far.sendTones(3, [[6000, 8000]]);
    await sleep(300);
    fork.inject(tones(8000, 3, [[500, 6000]]));
    await sleep(2000);
    const heard = a.far.lastHeard(1.5);
    await sending;
    expect(toneShare(heard, 6000, 16000), "B's 6 kHz tone under the injection").to.be.greaterThan(0.3);
    expect(toneShare(heard, 500, 16000), 'the injected 500 Hz tone').to.be.greaterThan(0.2);
    await a.leg.forkAudioStop(fork);
  });

  it('a 16 kHz injection into a PCMU leg is heard at 8 kHz without an alias', async () => {
    const { heard, stop } = await inject16k('PCMU');
    expect(toneShare(heard, 1000, 8000), 'the 1 kHz tone').to.be.greaterThan(0.8);
    expect(toneShare(heard, 2000, 8000), 'no alias of the 6 kHz tone').to.be.lessThan(0.01);
    await stop();
  });

  it('an injection at another rate is refused with a TypeError and the fork keeps working', async () => {
    const a = await leg('G722');
    const fork = await a.leg.forkAudioStart({ mix: 'in', onFrame: () => undefined });
    const bad = 44100;
    expect(() => fork.inject(new Int16Array(882), bad as InjectRate)).to.throw(TypeError, /8000 or 16000/);
    fork.inject(tones(16000, 2, [[6000, 8000]]), 16000);
    await sleep(1500);
    expect(toneShare(a.far.lastHeard(1), 6000, 16000)).to.be.greaterThan(0.5);
    await a.leg.forkAudioStop(fork);
  });
});
