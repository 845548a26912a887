// An early fork (ForkOptions.early, media-engine/worker/leg-early.ts): a leg's `in` audio handed on as
// its packets are read, not when the jitter buffer plays them. A far end on a plain UDP socket sends
// frames that each carry their number (the signs of their first 8 samples); the same leg has an early
// fork and one at the tick. The early fork hears each frame sooner by the time it waited in the jitter
// buffer (about its two frames; the buffer's real depth, sampled, is the reference), and both hear the same frames in the same order, each once, through a
// lost packet and two swapped ones; muted, the early fork hears silence. Asking for an early fork of anything but `in` at the leg's rate is refused.
// The leg is served in one phase of the engine's 20 ms period; the early fork is served in the others too,
// so a frame reaches it a phase after its packet (5 ms), not up to a period.
import { expect } from 'chai';
import dgram from 'node:dgram';
import type { AudioFork, Endpoint, MediaServer } from '../../media-engine';
import { encodeG711 } from '../../core/audio/g711';
import { numbered, numberOf, pcmuOffer, rejection, sleep, useMediaServer } from '../../testkit/media-engine/support';

interface Heard {
  n: number;
  at: number;
}

describe('media-engine: early forks (a leg heard as its packets come)', function () {
  this.timeout(30_000);
  let ms: MediaServer;
  useMediaServer({ ports: 40, workers: 1 }, (f) => ({ ms } = f));

  let sock: dgram.Socket;
  let ep: Endpoint;
  const forks: AudioFork[] = [];
  beforeEach(async () => {
    sock = dgram.createSocket('udp4');
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
    ep = await ms.createEndpoint({ remoteSdp: pcmuOffer(sock.address().port) });
  });
  afterEach(async () => {
    for (const f of forks.splice(0)) await f.stop().catch(() => undefined);
    await ep.destroy();
    sock.close();
  });

  async function listen(early: boolean): Promise<Heard[]> {
    const heard: Heard[] = [];
    forks.push(await ep.forkAudioStart({ mix: 'in', legRate: true, early, onFrame: (f) => void heard.push({ n: numberOf(f), at: performance.now() }) }));
    return heard;
  }

  /**
   * Sends frames `order` (numbers; null: the slot's packet is lost), one every 20 ms (plus `offset(i)` ms),
   * from source `ssrc`; resolves with when each frame was sent (performance.now(), by number).
   */
  async function send(order: (number | null)[], ssrc = 0x1234abcd, offset = (_i: number) => 0): Promise<Map<number, number>> {
    const sentAt = new Map<number, number>();
    // paced by the clock, not by each timer's own delay (a sender that drifts late empties the buffer)
    const t0 = performance.now();
    for (const [i, n] of order.entries()) {
      await sleep(t0 + i * 20 + offset(i) - performance.now());
      if (n !== null) {
        sentAt.set(n, performance.now());
        const p = Buffer.alloc(12 + 160);
        p[0] = 0x80;
        p[1] = 0;
        p.writeUInt16BE(n & 0xffff, 2);
        p.writeUInt32BE(n * 160, 4);
        p.writeUInt32BE(ssrc, 8);
        Buffer.from(encodeG711('PCMU', numbered(n))).copy(p, 12);
        sock.send(p, ep.local.port, '127.0.0.1');
      }
    }
    await sleep(300);
    return sentAt;
  }

  const numbers = (h: Heard[]) => h.map((x) => x.n).filter((n) => n >= 0);
  /**
   * Up to the first of the last frame heard: after the stream's end the buffer conceals it in both forks,
   * a message each, so when the test compares, a repeat may still be on its way to one of them.
   */
  const throughLast = (ns: number[]) => ns.slice(0, ns.indexOf(ns[ns.length - 1]!) + 1);

  /**
   * The jitter buffer's real depth (frames received and not yet played) sampled every 20 ms until `stop`.
   * Its mean over a stretch of steady flow, times the 20 ms between packets, is the mean time a frame
   * waited in the buffer (Little's law): what the early fork is ahead by, whatever the buffer's target
   * says (a stream that starts while the worker catches up after a stall waits a frame less than its
   * target; a late packet grows it).
   */
  function sampleDepth(): { meanMs(from: number, to: number): number; stop(): Promise<void> } {
    const samples: { at: number; frames: number }[] = [];
    let on = true;
    const loop = (async () => {
      while (on) {
        const st = await ep.getStats();
        samples.push({ at: performance.now(), frames: st.jitterDepthFrames });
        await sleep(20);
      }
    })();
    return {
      meanMs: (from, to) => {
        const inside = samples.filter((x) => x.at >= from && x.at <= to);
        expect(inside.length, 'depth samples over the stream').to.be.at.least(20);
        return (20 * inside.reduce((a, x) => a + x.frames, 0)) / inside.length;
      },
      stop: async () => {
        on = false;
        await loop;
      },
    };
  }

  /**
   * Over the frames from the buffer's third on (its start plays nothing) to the last: how much sooner the
   * early fork heard them than the fork at the tick, on average (ms), and the mean time they waited in the
   * buffer meanwhile (ms).
   */
  function leadAndWait(atTick: Heard[], early: Heard[], heard: number[], sentAt: Map<number, number>, depth: ReturnType<typeof sampleDepth>) {
    const steady = heard.filter((n) => n >= 3 && sentAt.has(n));
    const leads = steady.map((n) => atTick.find((h) => h.n === n)!.at - early.find((h) => h.n === n)!.at);
    const lead = leads.reduce((a, x) => a + x, 0) / leads.length;
    const wait = depth.meanMs(sentAt.get(steady[0]!)!, sentAt.get(steady[steady.length - 1]!)!);
    return { lead, wait, text: `lead ${lead.toFixed(1)} ms, wait ${wait.toFixed(1)} ms, leads ${leads.map(Math.round).join(',')}` };
  }

  /** The early fork is ahead by the time the frames waited in the buffer, give or take a few ms (it hears a frame up to a phase after its packet). */
  async function expectAheadByTheWait(r: ReturnType<typeof leadAndWait>): Promise<void> {
    // about its target: at least a frame, at most the target and a frame more (the phase of the packets)
    const target = (await ep.getStats()).jitterTargetFrames;
    expect(r.wait, `the buffer held the frames about its target of ${target} (${r.text})`).to.be.within(20, 20 * (target + 2));
    expect(r.lead - r.wait, `lead of the early fork less the frames' wait in the buffer, ms (${r.text})`).to.be.within(-10, 6);
  }

  it('hears each frame sooner than the fork at the tick, by about the jitter buffer’s two frames; both hear the same', async () => {
    const atTick = await listen(false);
    const early = await listen(true);
    const depth = sampleDepth();
    const sentAt = await send(Array.from({ length: 100 }, (_, i) => i + 1));
    await depth.stop();
    // (after the last, the buffer conceals it: a repeat or two of 100). A sender held up on a loaded machine
    // may have a packet or two come too late for the buffer: both forks then conceal the same frames
    const heard = [...new Set(numbers(atTick))];
    expect(heard.length, 'frames heard at the tick').to.be.at.least(95);
    expect(
      heard.every((n, i) => i === 0 || n > heard[i - 1]!),
      'in order',
    ).to.equal(true);
    expect(throughLast(numbers(early))).to.deep.equal(throughLast(numbers(atTick)));
    await expectAheadByTheWait(leadAndWait(atTick, early, heard, sentAt, depth));
    // from the first packet's frame on, both hear as many frames (the buffer's concealment after the last
    // included); the silence before it is the time from the forks' start to the first packet, and not compared
    const fromFirst = (h: Heard[]) => h.slice(h.findIndex((x) => x.n >= 0));
    expect(fromFirst(atTick).length - fromFirst(early).length, JSON.stringify([atTick.map((h) => h.n), early.map((h) => h.n)])).to.be.within(0, 3);
  });

  it('with the echo canceller on, hears each frame as soon: the canceller gets a sent frame for each without waiting for the next tick', async () => {
    await ep.echoCancel({ tailMs: 400 });
    const atTick = await listen(false);
    const early = await listen(true);
    const depth = sampleDepth();
    const sentAt = await send(Array.from({ length: 100 }, (_, i) => i + 1));
    await depth.stop();
    const heard = [...new Set(numbers(atTick))];
    expect(heard.length, 'frames heard at the tick').to.be.at.least(95);
    await expectAheadByTheWait(leadAndWait(atTick, early, heard, sentAt, depth));
  });

  for (const aec of [false, true])
    it(`hears a frame within a phase of its packet (5 ms), wherever in the leg’s period the packet comes${aec ? ', with the echo canceller on' : ''}`, async () => {
      if (aec) await ep.echoCancel({ tailMs: 400 });
      const early = await listen(true);
      // the packets' place in the 20 ms period moves by 7 ms each: a fork served only at the leg's tick
      // would hear them 0–20 ms after (a third within 6 ms)
      const sentAt = await send(
        Array.from({ length: 100 }, (_, i) => i + 1),
        0x1234abcd,
        (i) => (i * 7) % 20,
      );
      const waits = [...sentAt].flatMap(([n, at]) => {
        const h = early.find((x) => x.n === n);
        return h ? [h.at - at] : [];
      });
      expect(waits.length, 'frames heard').to.be.above(90);
      const soon = waits.filter((w) => w <= 6).length / waits.length;
      expect(soon, `share heard within 6 ms (waits: ${waits.map((w) => w.toFixed(0)).join(',')})`).to.be.at.least(0.6);
    });

  it('a lost packet and two swapped ones: the same frames in the same order, each once (the lost one concealed in both)', async () => {
    const atTick = await listen(false);
    const early = await listen(true);
    const order: (number | null)[] = Array.from({ length: 60 }, (_, i) => i + 1);
    order[20] = null; // 21 lost
    order[39] = 41; // 40 and 41 swapped
    order[40] = 40;
    await send(order);
    const t = numbers(atTick);
    // played in order (the swapped pair too), the lost one concealed (a repeat of 20, or silence)
    expect([...new Set(t)]).to.deep.equal(Array.from({ length: 60 }, (_, i) => i + 1).filter((n) => n !== 21));
    expect(
      t.every((n, i) => i === 0 || n >= t[i - 1]!),
      t.join(','),
    ).to.equal(true);
    expect(throughLast(numbers(early))).to.deep.equal(throughLast(t));
    // frame for frame from the first packet on, silence and concealment included (the early fork is ahead: its first frames)
    const from = (h: Heard[]) => h.slice(h.findIndex((x) => x.n === 1)).map((x) => x.n);
    const tick = from(atTick);
    expect(from(early).slice(0, tick.length)).to.deep.equal(tick);
  });

  it('muted, the early fork hears silence; unmuted, the frames again', async () => {
    const early = await listen(true);
    await ep.mute('in');
    await send(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(numbers(early)).to.deep.equal([]);
    expect(early.length).to.be.at.least(15);
    await ep.unmute('in');
    // (a new source: the first one's clock stood still while the playout point went on)
    await send(
      Array.from({ length: 20 }, (_, i) => i + 21),
      0x5678,
    );
    expect([...new Set(numbers(early))]).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 21));
  });

  it('is refused for `out` or `both`, or without legRate (EINVAL), before any frame', async () => {
    for (const opts of [
      { mix: 'both' as const, legRate: true },
      { mix: 'out' as const, legRate: true },
      { mix: 'in' as const, legRate: false },
    ]) {
      const e = (await rejection(ep.forkAudioStart({ ...opts, early: true, onFrame: () => undefined }))) as Error & { code?: string };
      expect(e.code, JSON.stringify(opts)).to.equal('EINVAL');
      expect(e.message).to.match(/early fork/);
    }
  });
});
