// Wideband across media workers (issue #34): the frame link between two workers carries 16 kHz
// frames from a wideband leg, so two G.722 legs bridged across workers pass a 6 kHz tone (only a
// 16 kHz path carries it), a G.722 leg bridged to a PCMU leg on another worker is heard at 8 kHz,
// and a G.722 member of a room on another worker hears the room's 16 kHz mix.
import { expect } from 'chai';
import type { Endpoint, MediaServer } from '../../media-engine';
import { useMediaServer } from '../../testkit/media-engine/support';
import { power, ToneFarEnd, toneShare, type FarCodec } from '../../testkit/media-engine/far-end';

describe('media-engine wideband across workers (frame link)', function () {
  this.timeout(40000);
  let ms: MediaServer;
  useMediaServer({ ports: 100, workers: 2 }, (f) => ({ ms } = f));

  const fars: ToneFarEnd[] = [];
  const eps: Endpoint[] = [];
  afterEach(async () => {
    for (const f of fars.splice(0)) f.close();
    for (const e of eps.splice(0)) await e.destroy();
  });

  /** An engine leg answering a raw far end's offer of `codec`, on another worker than `awayFrom` if given. */
  async function leg(codec: FarCodec, awayFrom?: Endpoint): Promise<{ far: ToneFarEnd; leg: Endpoint }> {
    const far = await new ToneFarEnd(codec).open();
    fars.push(far);
    let ep = await ms.createEndpoint({ remoteSdp: far.offer });
    eps.push(ep);
    // the server spreads endpoints over its workers: skip those landing next to `awayFrom`
    for (let i = 0; i < 6 && awayFrom && ep.host === awayFrom.host; i++) {
      ep = await ms.createEndpoint({ remoteSdp: far.offer });
      eps.push(ep);
    }
    if (awayFrom) expect(ep.host, 'on another worker').to.not.equal(awayFrom.host);
    far.sendTo(ep.local.port);
    return { far, leg: ep };
  }

  it('two G.722 legs bridged across workers pass a 6 kHz tone both ways', async () => {
    const a = await leg('G722');
    const b = await leg('G722', a.leg);
    await a.leg.bridge(b.leg);
    await Promise.all([a.far.sendTones(2.5, [[6000, 8000]]), b.far.sendTones(2.5, [[5000, 8000]])]);
    const heardB = b.far.lastHeard(1);
    const heardA = a.far.lastHeard(1);
    expect(power(heardB), 'B hears A').to.be.greaterThan(1e5);
    expect(toneShare(heardB, 6000, 16000), "B hears A's 6 kHz tone").to.be.greaterThan(0.5);
    expect(toneShare(heardA, 5000, 16000), "A hears B's 5 kHz tone").to.be.greaterThan(0.5);
  });

  it('a G.722 leg bridged to a PCMU leg on another worker: each hears the other in the narrow band', async () => {
    const a = await leg('G722');
    const b = await leg('PCMU', a.leg);
    await a.leg.bridge(b.leg);
    await Promise.all([a.far.sendTones(2.5, [[1000, 8000]]), b.far.sendTones(2.5, [[500, 8000]])]);
    expect(toneShare(b.far.lastHeard(1), 1000, 8000), 'the PCMU side hears the G.722 side').to.be.greaterThan(0.7);
    expect(toneShare(a.far.lastHeard(1), 500, 16000), 'the G.722 side hears the PCMU side').to.be.greaterThan(0.7);
  });

  it('a G.722 member on another worker hears and is heard in the 16 kHz mix of the room', async () => {
    const a = await leg('G722');
    const b = await leg('G722', a.leg);
    const room = await ms.createConference('x-hd-room', { near: a.leg });
    await a.leg.joinConference(room);
    await b.leg.joinConference(room);
    await Promise.all([a.far.sendTones(2.5, [[6000, 8000]]), b.far.sendTones(2.5, [[5000, 8000]])]);
    expect(toneShare(b.far.lastHeard(1), 6000, 16000), "the remote member hears A's 6 kHz tone").to.be.greaterThan(0.5);
    expect(toneShare(a.far.lastHeard(1), 5000, 16000), "A hears the remote member's 5 kHz tone").to.be.greaterThan(0.5);
    await room.destroy();
  });
});
