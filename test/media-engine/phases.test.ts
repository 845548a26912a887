/**
 * Send phases: a worker serves each endpoint in one 5 ms slot of the 20 ms period, so its packets
 * leave spread over the period; every endpoint still sends one packet per 20 ms with contiguous RTP
 * timestamps, including across a move to the conference/bridge slot.
 */
import { expect } from 'chai';
import dgram from 'node:dgram';
import { MediaServer, type Endpoint } from '../../media-engine';
import { pcmuOffer as offer, portRange } from '../../testkit/media-engine/support';

interface Rx {
  sock: dgram.Socket;
  port: number;
  arrivals: number[];
  ts: number[];
}

async function receiver(): Promise<Rx> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const rx: Rx = { sock, port: sock.address().port, arrivals: [], ts: [] };
  sock.on('message', (m) => {
    if (m.length < 12 || (m[1] & 0x7f) !== 0) return;
    rx.arrivals.push(performance.now());
    rx.ts.push(m.readUInt32BE(4));
  });
  return rx;
}

/** Gaps between consecutive RTP timestamps, in 20 ms frames. */
function steps(ts: number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < ts.length; i++) out.push(((ts[i] - ts[i - 1]) >>> 0) / 160);
  return out;
}

/** Each leg's mean arrival phase within the 20 ms period, ms (circular mean). */
function phaseOf(arrivals: number[]): number {
  let x = 0;
  let y = 0;
  for (const t of arrivals) {
    const a = ((t % 20) / 20) * 2 * Math.PI;
    x += Math.cos(a);
    y += Math.sin(a);
  }
  return ((((Math.atan2(y, x) / (2 * Math.PI)) * 20) % 20) + 20) % 20;
}

describe('media-engine send phases', function () {
  this.timeout(30_000);
  let ms: MediaServer;
  const rxs: Rx[] = [];
  const eps: Endpoint[] = [];

  before(async () => {
    ms = await MediaServer.start({ rtpPorts: portRange(), workers: 1, tickPhases: 4 });
  });
  after(async () => {
    for (const ep of eps) await ep.destroy().catch(() => undefined);
    await ms.destroy();
    for (const r of rxs) r.sock.close();
  });

  it('spreads 8 endpoints over the 20 ms period, each sending every 20 ms with contiguous timestamps', async () => {
    for (let i = 0; i < 8; i++) {
      const rx = await receiver();
      rxs.push(rx);
      eps.push(await ms.createEndpoint({ remoteSdp: offer(rx.port), inbandDtmf: false }));
    }
    await new Promise((r) => setTimeout(r, 300));
    for (const r of rxs) ((r.arrivals.length = 0), (r.ts.length = 0));
    await new Promise((r) => setTimeout(r, 1500));
    for (const r of rxs) {
      // about 75 packets in 1.5 s (tolerant: a loaded CI machine stalls timers), never a repeated or skipped timestamp
      expect(r.ts.length).to.be.within(50, 80);
      expect(steps(r.ts).every((s) => s === 1)).to.equal(true, `steps ${steps(r.ts).join(',')}`);
    }
    // two legs per slot: the legs' phases differ by about 5 ms steps, so they do not all leave together
    const phases = rxs.map((r) => phaseOf(r.arrivals)).sort((a, b) => a - b);
    const spread = Math.max(...phases.map((p, i) => (i === 0 ? p + 20 - phases[phases.length - 1] : p - phases[i - 1])));
    expect(spread, `phases ${phases.map((p) => p.toFixed(1)).join(',')}`).to.be.below(15);
  });

  it('bridging moves both legs to the mixer slot: still one packet per 20 ms, timestamps contiguous', async () => {
    const [a, b] = [rxs[1], rxs[2]];
    await new Promise((r) => setTimeout(r, 100));
    for (const r of [a, b]) ((r.arrivals.length = 0), (r.ts.length = 0));
    await eps[1].bridge(eps[2]);
    await new Promise((r) => setTimeout(r, 1000));
    for (const r of [a, b]) {
      // served once per period across the move (served twice would give ~100, never served ~0)
      expect(r.ts.length).to.be.within(35, 55);
      const st = steps(r.ts);
      expect(
        st.every((s) => s === 1),
        `steps ${st.join(',')}`,
      ).to.equal(true);
    }
    await eps[1].unbridge();
  });
});
