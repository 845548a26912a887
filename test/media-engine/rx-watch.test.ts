/**
 * The receive watch (media-engine/worker/rx-watch.ts, Endpoint.watchRx) on real loopback sockets: a leg
 * whose far end stops sending RTP reports 'rxTimeout' once, on the engine's clock, also when the pair is
 * served in C (the arrival time is read from C); its peer, still hearing its far end, does not. RTCP alone
 * keeps a leg alive; a held leg (the far end's sendonly) and a leg muted in (only listening) are not
 * watched, and a leg watched again starts its silence over.
 */
import { expect } from 'chai';
import dgram from 'node:dgram';
import { MediaServer, type Endpoint, type RxTimeoutEvent } from '../../media-engine';
import { writeRtpInto } from '../../media-engine/rtp-packet/packet';
import { pcmuOffer, portRange, sleep, bindRtpPair } from '../../testkit/media-engine/support';

const TIMEOUT_MS = 600;

/** A far end sending PCMU every 20 ms (RTP), or RTCP receiver reports every 200 ms, until stopped. */
class Far {
  private timer: NodeJS.Timeout | null = null;
  private seq = 0;
  private constructor(
    readonly rtp: dgram.Socket,
    readonly rtcp: dgram.Socket,
  ) {}
  static async open(): Promise<Far> {
    return new Far(...(await bindRtpPair()));
  }
  get port(): number {
    return this.rtp.address().port;
  }
  sendRtp(to: number): void {
    this.stop();
    const p = new Uint8Array(160).fill(0x55);
    const b = Buffer.alloc(172);
    this.timer = setInterval(() => {
      this.seq++;
      writeRtpInto(b, false, 0, this.seq & 0xffff, this.seq * 160, 0x1234, p, p.length);
      this.rtp.send(b, to, '127.0.0.1');
    }, 20);
  }
  /** RTCP only: an empty receiver report (RFC 3550 6.4.2) to the RTCP port */
  sendRtcp(to: number): void {
    this.stop();
    const rr = Buffer.from([0x80, 201, 0, 1, 0, 0, 0x12, 0x34]);
    this.timer = setInterval(() => this.rtcp.send(rr, to + 1, '127.0.0.1'), 200);
  }
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
  close(): void {
    this.stop();
    this.rtp.close();
    this.rtcp.close();
  }
}

/** The 'rxTimeout' events of an endpoint, with when they came. */
function timeouts(ep: Endpoint): { at: number; e: RxTimeoutEvent }[] {
  const got: { at: number; e: RxTimeoutEvent }[] = [];
  ep.on('rxTimeout', (e) => got.push({ at: performance.now(), e }));
  return got;
}

async function waitFor(what: string, fn: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!fn()) {
    if (performance.now() > end) throw new Error(`timeout waiting for ${what}`);
    await sleep(20);
  }
}

for (const cfg of [
  { name: 'pairs in C', inC: true },
  { name: 'every leg in JS', inC: false },
]) {
  describe(`media-engine receive watch (${cfg.name})`, function () {
    this.timeout(30_000);
    let ms: MediaServer;
    const fars: Far[] = [];
    const far = async () => {
      const f = await Far.open();
      fars.push(f);
      return f;
    };

    before(async () => {
      ms = await MediaServer.start({ rtpPorts: portRange(), workers: 1, plainLegsInC: cfg.inC });
    });
    afterEach(() => {
      for (const f of fars.splice(0)) f.close();
    });
    after(async () => {
      await ms?.destroy();
    });

    it('a bridged leg whose far end stops sending reports rxTimeout once; its peer does not', async () => {
      const [a, b] = [await far(), await far()];
      const epA = await ms.createEndpoint({ remoteSdp: pcmuOffer(a.port), inbandDtmf: false });
      const epB = await ms.createEndpoint({ remoteSdp: pcmuOffer(b.port), inbandDtmf: false, near: epA });
      await epA.bridge(epB);
      const [gotA, gotB] = [timeouts(epA), timeouts(epB)];
      a.sendRtp(epA.local.port);
      b.sendRtp(epB.local.port);
      await Promise.all([epA.watchRx(TIMEOUT_MS), epB.watchRx(TIMEOUT_MS)]);
      await sleep(3 * TIMEOUT_MS);
      if (cfg.inC) expect((await ms.stats())[0].cLegs, 'the pair runs in C').to.equal(2);
      expect(gotA.concat(gotB), 'both far ends send').to.deep.equal([]);
      a.stop();
      const stopped = performance.now();
      await waitFor('A times out', () => gotA.length > 0, 4 * TIMEOUT_MS);
      const after = gotA[0]!.at - stopped;
      expect(after).to.be.within(TIMEOUT_MS - 50, TIMEOUT_MS + 600);
      expect(gotA[0]!.e.silentMs).to.be.at.least(TIMEOUT_MS);
      await sleep(3 * TIMEOUT_MS);
      expect(gotA, 'once per silence').to.have.length(1);
      expect(gotB, 'B still hears its far end').to.deep.equal([]);
      // A's far end comes back, then goes quiet again: a second report
      a.sendRtp(epA.local.port);
      await sleep(2 * TIMEOUT_MS);
      expect(gotA).to.have.length(1);
      a.stop();
      await waitFor('A times out again', () => gotA.length > 1, 4 * TIMEOUT_MS);
      b.stop();
      await Promise.all([epA.destroy(), epB.destroy()]);
    });

    it('RTCP alone keeps a leg alive; without a watch nothing is reported', async () => {
      const [a, b] = [await far(), await far()];
      const epA = await ms.createEndpoint({ remoteSdp: pcmuOffer(a.port), inbandDtmf: false });
      const epB = await ms.createEndpoint({ remoteSdp: pcmuOffer(b.port), inbandDtmf: false });
      const [gotA, gotB] = [timeouts(epA), timeouts(epB)];
      a.sendRtcp(epA.local.port);
      await epA.watchRx(TIMEOUT_MS);
      await sleep(4 * TIMEOUT_MS);
      expect(gotA, 'RTCP is heard').to.deep.equal([]);
      expect(gotB, 'not watched').to.deep.equal([]);
      a.stop();
      await waitFor('A times out', () => gotA.length > 0, 4 * TIMEOUT_MS);
      await Promise.all([epA.destroy(), epB.destroy()]);
    });

    it('a held leg (far end sendonly) and a leg muted in are not watched; watched again, the silence starts over', async () => {
      const [a, b] = [await far(), await far()];
      const held = await ms.createEndpoint({ remoteSdp: pcmuOffer(a.port).replace('a=sendrecv', 'a=sendonly'), inbandDtmf: false });
      const listening = await ms.createEndpoint({ remoteSdp: pcmuOffer(b.port), inbandDtmf: false });
      const [gotHeld, gotListening] = [timeouts(held), timeouts(listening)];
      await listening.mute('in');
      await Promise.all([held.watchRx(TIMEOUT_MS), listening.watchRx(TIMEOUT_MS)]);
      await sleep(3 * TIMEOUT_MS);
      expect(gotHeld, 'held').to.deep.equal([]);
      expect(gotListening, 'only listening').to.deep.equal([]);
      // taken off hold (sendrecv again) and heard again: each times out a whole timeout later, not at once
      const back = performance.now();
      await Promise.all([held.modify(pcmuOffer(a.port)), listening.unmute('in')]);
      await waitFor('both time out', () => gotHeld.length > 0 && gotListening.length > 0, 4 * TIMEOUT_MS);
      for (const g of [gotHeld[0]!, gotListening[0]!]) expect(g.at - back).to.be.at.least(TIMEOUT_MS - 50);
      await Promise.all([held.destroy(), listening.destroy()]);
    });
  });
}
