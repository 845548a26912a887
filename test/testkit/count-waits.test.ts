// testkit's count waits on real UDP on loopback: each fails when the audio is wrong (nothing arrives,
// or packets keep arriving through what should be a silence), and a packet that waited in the socket
// while the loop was busy is counted before a bound is read.
import { expect } from 'chai';
import dgram from 'node:dgram';
import { grows, silentFor } from '../../testkit/count-waits';

/** A receiver counting datagrams and a sender that sends one each 20 ms while `on`, or one at a time. */
async function stream() {
  const rx = dgram.createSocket('udp4');
  const tx = dgram.createSocket('udp4');
  rx.on('error', () => undefined);
  tx.on('error', () => undefined);
  await new Promise<void>((r) => rx.bind(0, '127.0.0.1', r));
  const s = { count: 0, on: false, send: () => tx.send(Buffer.alloc(172), rx.address().port, '127.0.0.1') };
  rx.on('message', () => s.count++);
  const timer = setInterval(() => s.on && s.send(), 20);
  return Object.assign(s, {
    close: () => {
      clearInterval(timer);
      rx.close();
      tx.close();
    },
  });
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: Error) => e.message,
  );

/** Blocks the loop (a loaded machine) for `ms`. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('testkit: count waits', function () {
  this.timeout(10_000);
  let s: Awaited<ReturnType<typeof stream>>;
  beforeEach(async () => {
    s = await stream();
  });
  afterEach(() => s.close());

  it('grows resolves once the count has grown by n from the call; with nothing arriving it fails naming what and how many came', async () => {
    s.on = true;
    await grows(() => s.count, 10, 2000, 'ten packets');
    s.on = false;
    await new Promise((r) => setTimeout(r, 60));
    expect(await failure(grows(() => s.count, 1, 200, 'the first packet'))).to.equal('the first packet: 0 of 1 within 200 ms');
  });

  it('grows counts a packet that waited in the socket while the loop was busy past the bound', async () => {
    const p = grows(() => s.count, 1, 5, 'the queued packet');
    // after this turn's poll: the packet is sent, then the loop is busy past the wait's timer and its
    // bound, so the next turn runs that timer before it reads the socket
    setImmediate(() => {
      s.send();
      busy(50);
    });
    await p;
  });

  it('silentFor fails on a count that never stops, and on one that grows again within the window', async () => {
    s.on = true;
    expect(await failure(silentFor(() => s.count, 300, 'the music stopped', { settleMs: 400 }))).to.match(/^the music stopped: still growing 400 ms on/);
    s.on = false;
    const p = failure(silentFor(() => s.count, 600, 'the music stopped'));
    await new Promise((r) => setTimeout(r, 350)); // past the gap, inside the window
    s.send();
    expect(await p).to.equal('the music stopped: 1 more within 600 ms (at most 0)');
  });

  it('silentFor starts its window once what was in flight has arrived; `allow` tolerates that many in the window', async () => {
    s.on = true;
    await grows(() => s.count, 5, 2000, 'a few packets');
    s.on = false;
    const t0 = performance.now();
    await silentFor(() => s.count, 300, 'stopped');
    expect(performance.now() - t0).to.be.at.least(400);
    const p = silentFor(() => s.count, 500, 'few', { allow: 2 });
    await new Promise((r) => setTimeout(r, 250));
    s.send();
    s.send();
    await p;
  });
});
