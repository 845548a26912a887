/**
 * The receive watch (media-engine/worker/rx-watch.ts, Endpoint.watchRx) on real loopback sockets: a leg
 * whose far end stops sending RTP reports 'rxTimeout' once, on the engine's clock, also when the pair is
 * served in C (the arrival time is read from C); its peer, still hearing its far end, does not. RTCP alone
 * keeps a leg alive; a held leg (the far end's sendonly) and a leg muted in (only listening) are not
 * watched, and a leg watched again starts its silence over.
 */
import { expect } from 'chai';
import { Worker } from 'node:worker_threads';
import { MediaServer, type Endpoint, type RxTimeoutEvent } from '../../media-engine';
import { pcmuOffer, portRange, sleep } from '../../testkit/media-engine/support';
import { sippMediaPort } from '../../testkit/ports';
import { ThreadCalls } from '../../testkit/thread-calls';

const TIMEOUT_MS = 600;

/**
 * A far end on a thread of its own (so a stall of this thread, where the test and the engine's events run,
 * does not silence it: the engine's worker would rightly report that): binds its RTP port and the RTCP one
 * above it, then sends PCMU every 20 ms (RTP), or an empty receiver report (RFC 3550 6.4.2) every 200 ms to
 * the RTCP port, until stopped. Each request is answered once in force (testkit/thread-calls.ts).
 */
const FAR_END = `
const { parentPort } = require('node:worker_threads');
const dgram = require('node:dgram');
const rtp = dgram.createSocket('udp4');
const rtcp = dgram.createSocket('udp4');
for (const s of [rtp, rtcp]) s.on('error', (e) => parentPort.postMessage({ t: 'fault', error: e.message }));
const bind = (s, port) => new Promise((resolve, reject) => {
  s.once('error', reject);
  s.bind(port, '127.0.0.1', () => (s.off('error', reject), resolve()));
});
const packet = Buffer.alloc(172, 0x55);
packet[0] = 0x80;
packet[1] = 0;
packet.writeUInt32BE(0x1234, 8);
const rr = Buffer.from([0x80, 201, 0, 1, 0, 0, 0x12, 0x34]);
let seq = 0;
let timer = null;
function handle(req) {
  if (timer) clearInterval(timer);
  timer = null;
  if (req.t === 'bind') return bind(rtp, req.base).then(() => bind(rtcp, req.base + 1));
  if (req.t === 'rtp')
    timer = setInterval(() => {
      seq++;
      packet.writeUInt16BE(seq & 0xffff, 2);
      packet.writeUInt32BE((seq * 160) >>> 0, 4);
      rtp.send(packet, req.to, '127.0.0.1');
    }, 20);
  else if (req.t === 'rtcp') timer = setInterval(() => rtcp.send(rr, req.to + 1, '127.0.0.1'), 200);
  return Promise.resolve();
}
parentPort.on('message', (m) =>
  handle(m.req).then(
    () => parentPort.postMessage({ t: 'reply', id: m.id, error: null }),
    (e) => parentPort.postMessage({ t: 'reply', id: m.id, error: e.message }),
  ),
);
`;

type FarRequest = { t: 'bind'; base: number } | { t: 'rtp' | 'rtcp'; to: number } | { t: 'stop' };

class Far {
  private constructor(
    private readonly calls: ThreadCalls<FarRequest>,
    readonly port: number,
  ) {}
  static async open(): Promise<Far> {
    const calls = new ThreadCalls<FarRequest>(new Worker(FAR_END, { eval: true }), 'far end');
    const base = await sippMediaPort();
    await calls.call({ t: 'bind', base }).catch(async (e: Error) => {
      await calls.end().catch(() => undefined);
      throw e;
    });
    return new Far(calls, base);
  }
  sendRtp(to: number): Promise<void> {
    return this.calls.call({ t: 'rtp', to });
  }
  sendRtcp(to: number): Promise<void> {
    return this.calls.call({ t: 'rtcp', to });
  }
  stop(): Promise<void> {
    return this.calls.call({ t: 'stop' });
  }
  /** Ends the far end; throws what failed on its sockets meanwhile, if anything did. */
  close(): Promise<void> {
    return this.calls.end();
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
    afterEach(async () => {
      await Promise.all(fars.splice(0).map((f) => f.close()));
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
      await Promise.all([a.sendRtp(epA.local.port), b.sendRtp(epB.local.port)]);
      await Promise.all([epA.watchRx(TIMEOUT_MS), epB.watchRx(TIMEOUT_MS)]);
      await sleep(3 * TIMEOUT_MS);
      if (cfg.inC) expect((await ms.stats())[0].cLegs, 'the pair runs in C').to.equal(2);
      expect(gotA.concat(gotB), 'both far ends send').to.deep.equal([]);
      await a.stop();
      const stopped = performance.now();
      await waitFor('A times out', () => gotA.length > 0, 4 * TIMEOUT_MS);
      // not before the timeout (read here, after the far end's last packet); how soon after it is the
      // engine's own figure, on its clock: the silence it reports (this thread's receipt of the event may
      // be held by a stall of this thread, which is not the engine's)
      expect(gotA[0]!.at - stopped).to.be.at.least(TIMEOUT_MS - 50);
      expect(gotA[0]!.e.silentMs).to.be.within(TIMEOUT_MS, TIMEOUT_MS + 600);
      await sleep(3 * TIMEOUT_MS);
      expect(gotA, 'once per silence').to.have.length(1);
      expect(gotB, 'B still hears its far end').to.deep.equal([]);
      // A's far end comes back, then goes quiet again: a second report
      await a.sendRtp(epA.local.port);
      await sleep(2 * TIMEOUT_MS);
      expect(gotA).to.have.length(1);
      await a.stop();
      await waitFor('A times out again', () => gotA.length > 1, 4 * TIMEOUT_MS);
      await b.stop();
      await Promise.all([epA.destroy(), epB.destroy()]);
    });

    it('RTCP alone keeps a leg alive; without a watch nothing is reported', async () => {
      const [a, b] = [await far(), await far()];
      const epA = await ms.createEndpoint({ remoteSdp: pcmuOffer(a.port), inbandDtmf: false });
      const epB = await ms.createEndpoint({ remoteSdp: pcmuOffer(b.port), inbandDtmf: false });
      const [gotA, gotB] = [timeouts(epA), timeouts(epB)];
      await a.sendRtcp(epA.local.port);
      await epA.watchRx(TIMEOUT_MS);
      await sleep(4 * TIMEOUT_MS);
      expect(gotA, 'RTCP is heard').to.deep.equal([]);
      expect(gotB, 'not watched').to.deep.equal([]);
      await a.stop();
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
