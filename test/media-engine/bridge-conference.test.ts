import { expect } from 'chai';
import dgram from 'node:dgram';
import path from 'node:path';
import { MediaServer, type Endpoint } from '../../media-engine';
import { bestCorrelation, portRange, readWav, rejection, rms, sleep, useMediaServer } from '../../testkit/media-engine/support';

/**
 * Two worker clocks on a CPU-starved CI machine can slip a frame or two (0.59 seen once with both shards
 * running); chance level is about 0.1.
 */
const XWORKER_MIN_CORR = 0.5;

describe('media-engine bridge, conference, fork and ports', function () {
  this.timeout(30000);
  let ms: MediaServer;
  let dir: string;
  let speech: string;

  useMediaServer({ ports: 600, workers: 2, speech: 'Testing the bridge and the conference.' }, (f) => ({ ms, dir, speech } = f));

  /** A "phone" (offerer) and the engine leg that answers it; `near` places the engine leg. */
  async function call(near?: Endpoint): Promise<{ phone: Endpoint; leg: Endpoint }> {
    const phone = await ms.createEndpoint();
    const leg = await ms.createEndpoint({ remoteSdp: phone.local.sdp, near });
    await phone.modify(leg.local.sdp);
    return { phone, leg };
  }

  it('bridges two calls: what phone 1 says, phone 2 hears; DTMF still reaches the bridged leg', async () => {
    const c1 = await call();
    const c2 = await call(c1.leg);
    await c1.leg.bridge(c2.leg);
    const digits: string[] = [];
    c1.leg.on('dtmf', (e) => digits.push(e.dtmf));
    const rec = c2.phone.record(path.join(dir, 'bridged.wav'), { duration: 4 });
    await c1.phone.play(speech);
    await c1.phone.sendDtmf('7');
    const r = await rec;
    const ref = readWav(speech).samples;
    expect(bestCorrelation(ref, readWav(r.path).samples).corr).to.be.greaterThan(0.85);
    expect(digits).to.deep.equal(['7']);
    await c1.leg.unbridge();
    const after = c2.phone.record(path.join(dir, 'unbridged.wav'), { duration: 1 });
    await c1.phone.play(speech);
    expect(rms(readWav((await after).path).samples)).to.be.lessThan(50);
    for (const e of [c1.phone, c1.leg, c2.phone, c2.leg]) await e.destroy();
  });

  it('conference: every member hears the others but not itself; mute in works; the mix is recorded', async () => {
    const conf = await ms.createConference('room-1');
    const c1 = await call();
    const c2 = await call(c1.leg);
    const c3 = await call(c1.leg);
    // conference on the same worker as the legs
    const room = await ms.createConference('room-2', { near: c1.leg });
    await conf.destroy();
    for (const c of [c1, c2, c3]) await c.leg.joinConference(room);
    expect((await room.members()).length).to.equal(3);
    const mixRec = room.startRecording(path.join(dir, 'mix.wav'));
    const r2 = c2.phone.record(path.join(dir, 'p2.wav'), { duration: 4 });
    const r1 = c1.phone.record(path.join(dir, 'p1.wav'), { duration: 4, separate: true });
    await c1.phone.play(speech);
    const ref = readWav(speech).samples;
    expect(bestCorrelation(ref, readWav((await r2).path).samples).corr, 'member 2 hears member 1').to.be.greaterThan(0.85);
    expect(rms(readWav((await r1).files[1].path).samples), 'member 1 does not hear itself').to.be.lessThan(50);
    await room.mute(c1.leg, 'in');
    const muted = c3.phone.record(path.join(dir, 'p3.wav'), { duration: 2 });
    await c1.phone.play(speech);
    expect(rms(readWav((await muted).path).samples)).to.be.lessThan(50);
    const m = await room.stopRecording();
    expect(m!.reason).to.equal('stopped');
    expect(bestCorrelation(ref, readWav((await mixRec).path).samples).corr).to.be.greaterThan(0.85);
    await c3.leg.leaveConference();
    expect(await room.members()).to.have.length(2);
    await room.destroy();
    for (const c of [c1, c2, c3]) {
      await c.phone.destroy();
      await c.leg.destroy();
    }
  });

  it('bridges and conferences legs that live on different workers', async () => {
    const c1 = await call();
    const spare: Endpoint[] = [];
    let probe = await ms.createEndpoint();
    spare.push(probe);
    for (let i = 0; i < 4 && probe.host === c1.leg.host; i++) spare.push((probe = await ms.createEndpoint()));
    const c2 = await call(probe);
    expect(c2.leg.host).to.not.equal(c1.leg.host);
    await c1.leg.bridge(c2.leg);
    const ref = readWav(speech).samples;
    const rec = c2.phone.record(path.join(dir, 'xbridge.wav'), { duration: 4 });
    await c1.phone.play(speech);
    expect(bestCorrelation(ref, readWav((await rec).path).samples).corr).to.be.greaterThan(XWORKER_MIN_CORR);
    await c1.leg.unbridge();
    // a conference on c1's worker, c2 joins from the other worker
    const room = await ms.createConference('cross-room', { near: c1.leg });
    await c1.leg.joinConference(room);
    await c2.leg.joinConference(room);
    expect((await room.members()).sort()).to.deep.equal([c1.leg.uuid, c2.leg.uuid].sort());
    const rec2 = c1.phone.record(path.join(dir, 'xconf1.wav'), { duration: 4, separate: true });
    await c2.phone.play(speech);
    expect(bestCorrelation(ref, readWav((await rec2).files[1].path).samples).corr, 'c1 hears c2 across workers').to.be.greaterThan(XWORKER_MIN_CORR);
    const rec3 = c2.phone.record(path.join(dir, 'xconf2.wav'), { duration: 4, separate: true });
    await c1.phone.play(speech);
    expect(bestCorrelation(ref, readWav((await rec3).files[1].path).samples).corr, 'c2 hears c1 across workers').to.be.greaterThan(XWORKER_MIN_CORR);
    await room.mute(c2.leg, 'in');
    const rec4 = c1.phone.record(path.join(dir, 'xconf3.wav'), { duration: 2, separate: true });
    await c2.phone.play(speech);
    expect(rms(readWav((await rec4).files[1].path).samples)).to.be.lessThan(50);
    await c2.leg.destroy(); // leaves the conference on the other worker
    await sleep(50);
    expect(await room.members()).to.deep.equal([c1.leg.uuid]);
    await room.destroy();
    for (const e of [c1.phone, c1.leg, c2.phone, ...spare]) await e.destroy();
  });

  it('forks frames to a consumer and injects audio back; a slow consumer only loses frames', async () => {
    const c = await call();
    const frames: Int16Array[] = [];
    const fork = await c.leg.forkAudioStart({ mix: 'in', onFrame: (f) => void frames.push(f) });
    const slow = await c.leg.forkAudioStart({ mix: 'both', maxInFlight: 5, onFrame: () => sleep(1000) });
    const rec = c.phone.record(path.join(dir, 'inject.wav'), { duration: 2 });
    const tone = new Int16Array(8000).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 600 * i) / 8000)));
    fork.inject(tone);
    await c.phone.play(speech);
    const stats = await fork.stop();
    const slowStats = await slow.stop();
    expect(frames.length).to.be.greaterThan(50);
    expect(frames.every((f) => f.length === 160)).to.equal(true);
    const got = Int16Array.from(frames.flatMap((f) => Array.from(f)));
    expect(bestCorrelation(readWav(speech).samples, got).corr).to.be.greaterThan(0.85);
    expect(stats!.dropped).to.equal(0);
    expect(slowStats!.dropped).to.be.greaterThan(20);
    expect(slowStats!.sent).to.be.lessThan(frames.length / 4); // 5 in flight, each held for 1 s
    const heard = readWav((await rec).path).samples;
    expect(rms(heard, 0, 8000)).to.be.greaterThan(2000); // the injected tone reached the phone
    await c.phone.destroy();
    await c.leg.destroy();
  });

  it('hold: after a sendonly re-offer the leg stops sending and resumes on sendrecv', async () => {
    const c = await call();
    const held = c.phone.local.sdp.replace('a=sendrecv', 'a=sendonly');
    const answer = await c.leg.modify(held);
    expect(answer).to.contain('a=recvonly');
    const s1 = await c.leg.getStats();
    await sleep(300);
    const s2 = await c.leg.getStats();
    expect(s2.packetsSent - s1.packetsSent).to.equal(0);
    await c.leg.modify(c.phone.local.sdp);
    await sleep(300);
    const s3 = await c.leg.getStats();
    expect(s3.packetsSent - s2.packetsSent).to.be.within(8, 25);
    await c.phone.destroy();
    await c.leg.destroy();
  });

  it('port teardown: creating and destroying many endpoints returns the pool to full, skipping busy ports', async () => {
    const range = portRange(40);
    const small = await MediaServer.start({ rtpPorts: range, workers: 1 });
    // someone else holds the first RTP port of the range
    const squatter = dgram.createSocket('udp4');
    await new Promise<void>((r) => squatter.bind(range.min + (range.min % 2), '127.0.0.1', () => r()));
    try {
      const full = small.ports.capacity;
      expect(full).to.equal(20);
      for (let round = 0; round < 5; round++) {
        const eps = await Promise.all(Array.from({ length: 15 }, () => small.createEndpoint()));
        expect(new Set(eps.map((e) => e.local.port)).size).to.equal(15);
        expect(eps.some((e) => e.local.port === range.min + (range.min % 2))).to.equal(false);
        await Promise.all(eps.map((e) => e.destroy()));
      }
      expect(small.ports.allocated).to.equal(0);
      expect(small.ports.available).to.equal(full);
      const eps = await Promise.all(Array.from({ length: 19 }, () => small.createEndpoint()));
      expect((await rejection(small.createEndpoint())).message).to.match(/no free RTP port|no bindable/);
      await Promise.all(eps.map((e) => e.destroy()));
    } finally {
      squatter.close();
      await small.destroy();
    }
  });
});
