/**
 * A worker's 20 ms clock runs only while it has something to serve: an idle worker woke 250 times a
 * second for nothing (~5 % of a core each, docs/benchmarks.md). The clock stops when the
 * last leg, conference or link is gone and starts again with the next one, which then sends as usual.
 */
import { expect } from 'chai';
import dgram from 'node:dgram';
import { MediaServer } from '../../media-engine';
import { pcmuOffer as offer, portRange, sleep } from '../../testkit/media-engine/support';

describe('media-engine idle worker clock', function () {
  this.timeout(20_000);
  let ms: MediaServer;
  let sock: dgram.Socket;
  let packets = 0;

  before(async () => {
    ms = await MediaServer.start({ rtpPorts: portRange(), workers: 1 });
    sock = dgram.createSocket('udp4');
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
    sock.on('message', () => packets++);
  });
  after(async () => {
    await ms.destroy();
    sock.close();
  });

  const ticks = async () => (await ms.stats())[0].ticks;

  /** Ticks counted over `ms` of wall time. */
  async function ticksOver(ms: number): Promise<number> {
    const t0 = await ticks();
    await sleep(ms);
    return (await ticks()) - t0;
  }

  it('an idle worker does not tick; a leg starts the clock, and its going stops it', async () => {
    expect(await ticksOver(300)).to.equal(0);
    const ep = await ms.createEndpoint({ remoteSdp: offer(sock.address().port), inbandDtmf: false });
    packets = 0;
    expect(await ticksOver(500)).to.be.greaterThan(40); // 4 phases: 100 ticks in 500 ms, loosely
    expect(packets).to.be.within(15, 30); // the leg sends its 25 packets
    await ep.destroy();
    await sleep(50); // the tick after the last leg went stops the clock
    expect(await ticksOver(300)).to.equal(0);
  });

  it('a conference alone keeps the clock running (its mix and recording are served by ticks)', async () => {
    const conf = await ms.createConference();
    expect(await ticksOver(300)).to.be.greaterThan(20);
    await conf.destroy();
    await sleep(50);
    expect(await ticksOver(300)).to.equal(0);
  });

  it('after a pause, a new leg sends every 20 ms with contiguous timestamps', async () => {
    const ts: number[] = [];
    const listen = (m: Buffer) => {
      if (m.length >= 12 && (m[1] & 0x7f) === 0) ts.push(m.readUInt32BE(4));
    };
    sock.on('message', listen);
    const ep = await ms.createEndpoint({ remoteSdp: offer(sock.address().port), inbandDtmf: false });
    await sleep(1000);
    await ep.destroy();
    sock.off('message', listen);
    expect(ts.length).to.be.within(35, 55);
    const steps = ts.slice(1).map((t, i) => ((t - ts[i]) >>> 0) / 160);
    expect(
      steps.every((s) => s === 1),
      `steps ${steps.join(',')}`,
    ).to.equal(true);
  });
});
