// The conference mixer at 16 kHz (issue #34): a room with a wideband (G.722) member mixes at 16 kHz,
// so a 6 kHz tone one G.722 member sends reaches another G.722 member; a PCMU member in the same room
// hears the rest at 8 kHz (the 1 kHz part, not the 6 kHz one it cannot carry) and is heard by both;
// the room's recording is 16 kHz then. An all-PCMU room records at 8 kHz as before.
import path from 'node:path';
import { expect } from 'chai';
import type { Endpoint, MediaServer } from '../../media-engine';
import { readWav, sleep, useMediaServer } from '../../testkit/media-engine/support';
import { power, ToneFarEnd, toneShare, type FarCodec, useFarEndLegs } from '../../testkit/media-engine/far-end';

describe('media-engine conference mixing at 16 kHz', function () {
  this.timeout(40000);
  let ms: MediaServer;
  let dir: string;
  useMediaServer({ ports: 100, workers: 1 }, (f) => ({ ms, dir } = f));

  const farEndLeg = useFarEndLegs(() => ms);

  /** An engine leg answering a raw far end's offer of `codec`. */
  async function member(codec: FarCodec): Promise<{ far: ToneFarEnd; leg: Endpoint }> {
    const m = await farEndLeg(codec);
    expect(m.leg.local.sdp).to.contain(codec === 'G722' ? 'G722/8000' : 'PCMU/8000');
    return m;
  }

  it('two G.722 members hear each other at 16 kHz, a PCMU member hears the narrowband rest; the recording is 16 kHz', async () => {
    const room = await ms.createConference('hd-room');
    const a = await member('G722');
    const b = await member('G722');
    const c = await member('PCMU');
    for (const m of [a, b, c]) await m.leg.joinConference(room);
    const rec = room.startRecording(path.join(dir, 'hd-room.wav'));
    // A sends 6 kHz + 1 kHz, C sends 500 Hz, B is silent
    await Promise.all([
      a.far.sendTones(3, [
        [6000, 6000],
        [1000, 6000],
      ]),
      c.far.sendTones(3, [[500, 8000]]),
    ]);
    const heardB = b.far.lastHeard(1.5);
    const heardC = c.far.lastHeard(1.5);
    const heardA = a.far.lastHeard(1.5);
    expect(power(heardB), 'B hears the room').to.be.greaterThan(1e5);
    expect(toneShare(heardB, 6000, 16000), "B hears A's 6 kHz tone").to.be.greaterThan(0.2);
    expect(toneShare(heardB, 1000, 16000), "B hears A's 1 kHz tone").to.be.greaterThan(0.15);
    expect(toneShare(heardB, 500, 16000), "B hears C's 500 Hz tone").to.be.greaterThan(0.15);
    expect(toneShare(heardC, 1000, 8000), "C hears A's 1 kHz tone").to.be.greaterThan(0.7);
    expect(toneShare(heardC, 500, 8000), 'C does not hear itself').to.be.lessThan(0.05);
    expect(toneShare(heardA, 500, 16000), 'A hears C').to.be.greaterThan(0.7);
    expect(toneShare(heardA, 6000, 16000), 'A does not hear itself').to.be.lessThan(0.05);
    await room.stopRecording();
    const wav = readWav((await rec).path);
    expect(wav.rate, 'a room with wideband members records at 16 kHz').to.equal(16000);
    const tail = wav.samples.subarray(wav.samples.length - 24000, wav.samples.length - 8000);
    expect(toneShare(tail, 6000, 16000), 'the 6 kHz tone is in the recording').to.be.greaterThan(0.15);
    expect(toneShare(tail, 500, 16000), 'the PCMU member is in the recording').to.be.greaterThan(0.15);
    // B leaves: the room keeps mixing for the others, a member joins and leaves again without harm
    await b.leg.leaveConference();
    c.far.clear();
    await a.far.sendTones(1.5, [[1000, 8000]]);
    expect(toneShare(c.far.lastHeard(1), 1000, 8000), 'C still hears A').to.be.greaterThan(0.7);
    await room.destroy();
  });

  it('an all-PCMU room mixes and records at 8 kHz as before', async () => {
    const room = await ms.createConference('nb-room');
    const a = await member('PCMU');
    const b = await member('PCMU');
    for (const m of [a, b]) await m.leg.joinConference(room);
    const rec = room.startRecording(path.join(dir, 'nb-room.wav'));
    await a.far.sendTones(2, [[1000, 8000]]);
    expect(toneShare(b.far.lastHeard(1), 1000, 8000), 'B hears A').to.be.greaterThan(0.8);
    await room.stopRecording();
    const wav = readWav((await rec).path);
    expect(wav.rate).to.equal(8000);
    expect(toneShare(wav.samples.subarray(wav.samples.length - 12000, wav.samples.length - 4000), 1000, 8000)).to.be.greaterThan(0.8);
    await room.destroy();
    await sleep(50);
  });
});
