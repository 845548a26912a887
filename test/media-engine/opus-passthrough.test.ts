// Opus↔Opus without transcoding (issue #34): two Opus legs bridged on one worker forward each other's
// packets as they came (payload unchanged, the leg's own SSRC, sequence numbers and timestamps on the
// same grid), so the engine neither decodes nor encodes a packet (the legs' codec counters stay at 0).
// As soon as a leg needs the audio (a prompt on it, a recording of the other), it transcodes again, and
// back to forwarding when that ends. Real UDP far ends send Opus a tone made by the engine's codec module.
import { expect } from 'chai';
import dgram from 'node:dgram';
import type { Endpoint, MediaServer } from '../../media-engine';
import { hearTone, isTone, tonePackets } from '../../scripts/bench/media/codec-tone';
import { offer } from '../../scripts/bench/media/codec-legs';
import { sleep, useMediaServer } from '../../testkit/media-engine/support';

interface Got {
  seq: number;
  ts: number;
  ssrc: number;
  payload: Buffer;
}

/** A far end on loopback: sends `packets` (replayed) every 20 ms to `port` from `start()` until `stop()`; keeps what it gets. */
async function farEnd(packets: Buffer[]) {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const got: Got[] = [];
  s.on('message', (m) => {
    if ((m[1] & 0x7f) !== 111) return;
    got.push({ seq: m.readUInt16BE(2), ts: m.readUInt32BE(4), ssrc: m.readUInt32BE(8), payload: Buffer.from(m.subarray(12 + (m[0] & 0x0f) * 4)) });
  });
  let timer: NodeJS.Timeout | null = null;
  let n = 0;
  return {
    port: s.address().port,
    got,
    start(to: number) {
      const t0 = performance.now();
      const tick = () => {
        while (performance.now() >= t0 + n * 20) {
          const p = packets[n % packets.length];
          const b = Buffer.alloc(12 + p.length);
          b[0] = 0x80;
          b[1] = 111;
          b.writeUInt16BE(n & 0xffff, 2);
          b.writeUInt32BE((n * 960) >>> 0, 4);
          b.writeUInt32BE(0x1234, 8);
          p.copy(b, 12);
          s.send(b, to, '127.0.0.1');
          n++;
        }
        timer = setTimeout(tick, 5);
      };
      tick();
    },
    close() {
      if (timer) clearTimeout(timer);
      s.close();
    },
  };
}

describe('media-engine Opus↔Opus pass-through', function () {
  this.timeout(60000);
  let ms: MediaServer;
  let speech: string;
  useMediaServer({ ports: 60, workers: 1, speech: 'A prompt on one side of an Opus call.' }, (f) => ({ ms, speech } = f));
  const toneA = tonePackets('opus', 1000);
  const toneB = tonePackets('opus', 600);

  async function call() {
    const fa = await farEnd(toneA);
    const fb = await farEnd(toneB);
    const a = await ms.createEndpoint({ remoteSdp: offer('opus', fa.port) });
    const b = await ms.createEndpoint({ remoteSdp: offer('opus', fb.port), near: a });
    await a.bridge(b);
    fa.start(a.local.port);
    fb.start(b.local.port);
    return { fa, fb, a, b };
  }
  const work = async (ep: Endpoint) => {
    const s = await ep.getStats();
    return s.codecDecoded + s.codecEncoded;
  };

  it('forwards the packets: nothing decoded or encoded, payloads as sent, its own stream headers', async () => {
    const { fa, fb, a, b } = await call();
    try {
      // (before the bridge each leg encoded silence for a tick or two)
      await sleep(300);
      const [a0, b0] = [await work(a), await work(b)];
      await sleep(1200);
      expect((await work(a)) - a0, 'codec work on A').to.equal(0);
      expect((await work(b)) - b0, 'codec work on B').to.equal(0);
      // each packet goes on as it arrives, not at the peer's next turn (up to a tick later)
      const [sa, sb] = [await a.getStats(), await b.getStats()];
      expect(sb.forwardedOnArrival, `B sent on as they arrived, of the ${sa.packetsReceived} A received`).to.be.greaterThan(sa.packetsReceived * 0.8);
      const atB = fb.got.slice(-20);
      expect(atB.length).to.equal(20);
      // every payload B's far end got is one of the packets A's far end sent, byte for byte
      const sent = new Set(toneA.map((p) => p.toString('hex')));
      for (const g of atB) expect(sent.has(g.payload.toString('hex')), 'payload unchanged').to.equal(true);
      // B's own stream: one SSRC (not the far end's 0x1234), consecutive sequence numbers, 960 ticks apart
      expect(new Set(atB.map((g) => g.ssrc)).size).to.equal(1);
      expect(atB[0].ssrc).to.not.equal(0x1234);
      for (let i = 1; i < atB.length; i++) {
        expect((atB[i].seq - atB[i - 1].seq) & 0xffff).to.equal(1);
        expect((atB[i].ts - atB[i - 1].ts) >>> 0).to.equal(960);
      }
      expect(
        isTone(
          hearTone(
            'opus',
            atB.map((g) => g.payload),
            1000,
          ),
        ),
        "B's far end hears A's tone",
      ).to.equal(true);
      expect(
        isTone(
          hearTone(
            'opus',
            fa.got.slice(-12).map((g) => g.payload),
            600,
          ),
        ),
        "A's far end hears B's tone",
      ).to.equal(true);
    } finally {
      fa.close();
      fb.close();
      await a.destroy();
      await b.destroy();
    }
  });

  it('transcodes while a prompt plays on one leg or the other is recorded, then forwards again', async () => {
    const { fa, fb, a, b } = await call();
    try {
      await sleep(600);
      const w0 = await work(b);
      await b.play(speech);
      const w1 = await work(b);
      expect(w1 - w0, 'B encoded the prompt').to.be.greaterThan(20);
      await sleep(300);
      const w2 = await work(b);
      await sleep(600);
      expect((await work(b)) - w2, 'forwarding again after the prompt').to.equal(0);
      // a recording of A needs A's audio: A decodes while it runs, and B's far end still hears A's tone
      const d0 = await work(a);
      const n0 = fb.got.length;
      await a.record(`${speech}.rec.wav`, { duration: 1 });
      expect((await work(a)) - d0, 'A decoded for its recorder').to.be.greaterThan(20);
      expect(
        isTone(
          hearTone(
            'opus',
            fb.got
              .slice(n0)
              .slice(-12)
              .map((g) => g.payload),
            1000,
          ),
        ),
        "B's far end hears A's tone throughout",
      ).to.equal(true);
    } finally {
      fa.close();
      fb.close();
      await a.destroy();
      await b.destroy();
    }
  });
});
