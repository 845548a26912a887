// Injected audio that starts (an agent's reply, a media stream's first `media`) on a leg of its own: the
// engine moves the leg to the soonest phase of its 20 ms period it may be served in
// (media-engine/worker/engine-parts.ts soonestSlot), so the first frame goes out within half a period,
// not up to a whole one after the leg's own slot. The far end, a plain UDP socket, sees the stream go on
// as before: every packet, in sequence, 160 timestamp units apart. Bridged legs stay where they are.
// The fork is told when such an injection's first frame went out (AudioFork.nextStart: the worker's
// stamp, which ai_talk's voice takes as a reply's first RTP out).
import { expect } from 'chai';
import dgram from 'node:dgram';
import type { Endpoint, MediaServer } from '../../media-engine';
import { decodeG711 } from '../../core/audio/g711';
import { pcmuOffer, sleep, useMediaServer } from '../../testkit/media-engine/support';

interface Packet {
  at: number;
  seq: number;
  ts: number;
  voiced: boolean;
}

/** 60 ms of a 1 kHz tone at 8 kHz */
const BURST = Int16Array.from({ length: 480 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / 8000)));

describe('media-engine: injected audio that starts goes out in the soonest phase', function () {
  this.timeout(30_000);
  let ms: MediaServer;
  useMediaServer({ ports: 40, workers: 1 }, (f) => ({ ms } = f));

  const socks: dgram.Socket[] = [];
  const eps: Endpoint[] = [];
  afterEach(async () => {
    for (const ep of eps.splice(0)) await ep.destroy();
    for (const s of socks.splice(0)) s.close();
  });

  /** A leg whose far end records every packet it gets. */
  async function leg(): Promise<{ ep: Endpoint; packets: Packet[] }> {
    const sock = dgram.createSocket('udp4');
    socks.push(sock);
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
    const packets: Packet[] = [];
    sock.on('message', (m) => {
      if (m.length < 12 + 160) return;
      const pcm = decodeG711('PCMU', m.subarray(12, 12 + 160));
      let peak = 0;
      for (const s of pcm) peak = Math.max(peak, Math.abs(s));
      packets.push({ at: performance.now(), seq: m.readUInt16BE(2), ts: m.readUInt32BE(4), voiced: peak > 2000 });
    });
    const ep = await ms.createEndpoint({ remoteSdp: pcmuOffer(sock.address().port) });
    eps.push(ep);
    return { ep, packets };
  }

  /** Injects BURST `rounds` times, 200 ms apart and 7 ms later in the period each time (so the injections fall all over the leg's period); the wait of each for its first voiced packet, ms. */
  async function bursts(ep: Endpoint, packets: Packet[], rounds: number): Promise<number[]> {
    const fork = await ep.forkAudioStart({ mix: 'in', onFrame: () => undefined });
    await sleep(300);
    const waits: number[] = [];
    for (let i = 0; i < rounds; i++) {
      await sleep(100 + ((i * 7) % 20));
      const at = performance.now();
      fork.inject(BURST);
      await sleep(100);
      const first = packets.find((p) => p.at > at && p.voiced);
      if (first) waits.push(first.at - at);
    }
    await fork.stop();
    return waits;
  }

  it('goes out within half a period (10 ms) of the injection; the stream goes on without a gap', async () => {
    const { ep, packets } = await leg();
    const waits = await bursts(ep, packets, 30);
    expect(waits.length, 'bursts heard').to.equal(30);
    // served only in its own slot, the injections would wait 0–20 ms: about half within 11 ms
    const soon = waits.filter((w) => w <= 11).length / waits.length;
    expect(soon, `share out within 11 ms (waits: ${waits.map((w) => w.toFixed(0)).join(',')})`).to.be.at.least(0.85);
    // every packet, in sequence, the RTP clock unbroken (the moves shorten an interval, nothing else)
    const gaps = packets.slice(1).flatMap((p, i) => {
      const q = packets[i]!;
      return ((p.seq - q.seq) & 0xffff) === 1 && (p.ts - q.ts) >>> 0 === 160 ? [] : [`${q.seq}/${q.ts} → ${p.seq}/${p.ts}`];
    });
    expect(gaps, 'breaks in sequence or timestamps').to.deep.equal([]);
    expect(packets.length).to.be.above(250);
  });

  it('reports when an injection that starts went out (nextStart): after the inject, before the far end has it; none while audio is queued', async () => {
    const { ep, packets } = await leg();
    const fork = await ep.forkAudioStart({ mix: 'in', onFrame: () => undefined, reportStarts: true });
    await sleep(200);
    for (let i = 0; i < 5; i++) {
      const started = fork.nextStart(1000);
      const at = Date.now();
      const perfAt = performance.now();
      fork.inject(BURST);
      const out = await started;
      expect(out, 'reported').to.be.a('number');
      await sleep(100);
      const first = packets.find((p) => p.at > perfAt && p.voiced);
      expect(first, 'the burst heard').to.not.equal(undefined);
      // (the two clocks of this process agree to a millisecond)
      expect(out! - at, 'after the inject').to.be.within(-1, 100);
      expect(performance.timeOrigin + first!.at - out!, 'before the far end has it').to.be.within(-1, 100);
      await sleep(100 + i * 7);
    }
    // two seconds queued: a second injection does not start anything
    fork.inject(Int16Array.from({ length: 16000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 500 * i) / 8000))));
    await sleep(100);
    const more = fork.nextStart(300);
    fork.inject(BURST);
    expect(await more, 'nothing starts while audio is queued').to.equal(null);
    // cleared, the next one starts again; a stopped fork answers null at once
    await fork.clearInjected();
    const again = fork.nextStart(1000);
    fork.inject(BURST);
    expect(await again).to.be.a('number');
    await fork.stop();
    expect(await fork.nextStart(1000)).to.equal(null);
  });

  it('a fork started without reportStarts: the worker reports no start, and nextStart is refused', async () => {
    const { ep, packets } = await leg();
    const fork = await ep.forkAudioStart({ mix: 'in', onFrame: () => undefined });
    expect(() => fork.nextStart(1000)).to.throw(TypeError, /reportStarts/);
    // listen where the worker's report for this fork would land
    const reported: number[] = [];
    const host = (fork as unknown as { host: { forkStarts: Map<string, (at: number) => void> } }).host;
    host.forkStarts.set(fork.id, (at) => void reported.push(at));
    await sleep(100);
    const perfAt = performance.now();
    fork.inject(BURST);
    await sleep(300);
    expect(
      packets.find((p) => p.at > perfAt && p.voiced),
      'the burst heard',
    ).to.not.equal(undefined);
    expect(reported, 'reports posted').to.deep.equal([]);
    host.forkStarts.delete(fork.id);
    await fork.stop();
  });

  it('a bridged leg stays in its slot: the injections wait for it as before (0–20 ms)', async () => {
    const a = await leg();
    const b = await leg();
    await a.ep.bridge(b.ep);
    const waits = await bursts(a.ep, a.packets, 30);
    expect(waits.length).to.equal(30);
    // the same injections land all over the period: some wait past half of it
    expect(waits.filter((w) => w > 12).length, `waits: ${waits.map((w) => w.toFixed(0)).join(',')}`).to.be.at.least(6);
  });
});
