import { expect } from 'chai';
import path from 'node:path';
import { type MediaServer, type Endpoint } from '../../media-engine';
import { bestCorrelation, bindable, readWav, rejection, rms, sleep, useMediaServer } from '../../testkit/media-engine/support';

/** The loudest window's RMS. */
function rmsMax(x: Int16Array, win: number): number {
  let best = 0;
  for (let from = 0; from + win <= x.length; from += win / 4) best = Math.max(best, rms(x, from, from + win));
  return best;
}

describe('media-engine robustness: worker crash, RTCP on the wire, conference fork', function () {
  this.timeout(45000);
  let ms: MediaServer;
  let dir: string;
  let speech: string;

  useMediaServer({ ports: 200, workers: 2, speech: 'One two three four five. The conference fork hears this.' }, (f) => ({ ms, dir, speech } = f));

  async function pair(near?: Endpoint): Promise<[Endpoint, Endpoint]> {
    const a = await ms.createEndpoint({ near });
    const b = await ms.createEndpoint({ remoteSdp: a.local.sdp, near: near ?? a });
    await a.modify(b.local.sdp);
    return [a, b];
  }

  it('RTCP: each side receives SRs whose packet counts match what the other sent, and reports on its stream', async () => {
    const [a, b] = await pair();
    // both send every 20 ms (silence when idle); the first report goes out within 1-6 s, then every ~5 s
    const deadline = Date.now() + 15000;
    let sa = await a.getStats();
    let sb = await b.getStats();
    while (Date.now() < deadline && (sa.rtcp.senderReports === 0 || sb.rtcp.senderReports === 0)) {
      await sleep(250);
      sa = await a.getStats();
      sb = await b.getStats();
    }
    expect(sb.rtcp.senderReports, 'SRs at B').to.be.greaterThan(0);
    expect(sa.rtcp.senderReports, 'SRs at A').to.be.greaterThan(0);
    // what A says it sent (at report time) is at most what A has sent now, and at least 1 s of packets
    expect(sb.rtcp.lastSender!.packetCount).to.be.within(50, sa.packetsSent);
    expect(sb.rtcp.lastSender!.octetCount).to.equal(sb.rtcp.lastSender!.packetCount * 160);
    expect(sa.rtcp.lastSender!.packetCount).to.be.within(50, sb.packetsSent);
    // the report blocks are about our own stream, with sane loss on loopback
    const onA = sa.rtcp.lastReportOnUs!;
    expect(onA, 'B reports on A').to.not.equal(null);
    expect(onA.cumulativeLost).to.be.within(0, 5);
    expect(onA.fractionLost).to.be.below(13); // < 5 %
    expect(sb.packetsReceived).to.be.greaterThan(50);
    await a.destroy();
    await b.destroy();
  });

  it('conference fork: the whole mix reaches the consumer and injected audio reaches every member', async () => {
    const room = await ms.createConference();
    const [p1, l1] = await pair();
    const [p2, l2] = await pair();
    await room.join(l1);
    await room.join(l2);
    const frames: Int16Array[] = [];
    const fork = await room.forkAudioStart({ onFrame: (f) => void frames.push(f) });
    const tone = new Int16Array(8000).map((_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 600 * i) / 8000)));
    const rec2 = p2.record(path.join(dir, 'conf-inject.wav'), { duration: 1.5 });
    fork.inject(tone);
    const heard = readWav((await rec2).path).samples;
    // every member hears the injected tone (a second of it, somewhere in the 1.5 s recorded)
    expect(rmsMax(heard, 4000), 'injected tone at member 2').to.be.greaterThan(2000);
    frames.length = 0;
    await p1.play(speech);
    await sleep(300);
    const stats = await fork.stop();
    expect(stats!.dropped).to.equal(0);
    expect(stats!.injected).to.be.within(48, 52);
    const got = Int16Array.from(frames.flatMap((f) => Array.from(f)));
    expect(bestCorrelation(readWav(speech).samples, got).corr, 'mix heard by the fork').to.be.greaterThan(0.6);
    await room.destroy();
    for (const e of [p1, l1, p2, l2]) await e.destroy();
    expect(frames.length).to.be.greaterThan(100);
  });

  it('a crashed worker frees its ports, fails its pending operations clearly, and the others keep serving', async () => {
    const exits: number[] = [];
    ms.on('workerExit', (e: { index: number }) => exits.push(e.index));
    const [a, b] = await pair();
    const victim = b.host;
    const ports = [a.local.port, b.local.port];
    const allocatedBefore = ms.ports.allocated;
    const pendingAmd = rejection(b.amd({ initialSilence: 60000, totalAnalysisTime: 60000 }));
    const pendingPlay = rejection(a.play('silence_stream://30000'));
    const destroyed = new Promise<void>((resolve) => b.once('destroy', () => resolve()));
    await sleep(100);
    await victim.kill();
    await destroyed;
    const e1 = (await pendingAmd) as Error & { code?: string };
    const e2 = (await pendingPlay) as Error & { code?: string };
    expect(e1.code).to.equal('EWORKERGONE');
    expect(e1.message).to.match(/media worker \d exited .*endpoints are gone/);
    expect(e2.code).to.equal('EWORKERGONE');
    expect(a.destroyed && b.destroyed).to.equal(true);
    expect(exits).to.deep.equal([victim.index]);
    expect(ms.ports.allocated).to.equal(allocatedBefore - 2);
    for (const p of ports) expect(await bindable(p), `port ${p} free again`).to.equal(true);
    expect((await rejection(b.play(speech))).message).to.match(/destroyed/);
    // new endpoints land on the surviving worker and carry audio
    const [c, d] = await pair();
    expect(c.host).to.not.equal(victim);
    const rec = d.record(path.join(dir, 'after-crash.wav'), { duration: 3 });
    await c.play(speech);
    const r = await rec;
    expect(bestCorrelation(readWav(speech).samples, readWav(r.path).samples).corr).to.be.greaterThan(0.8);
    expect((await ms.stats()).length).to.equal(1);
    await c.destroy();
    await d.destroy();
  });
});
