// testkit's LossyRelay keeps a path of its own: a stall of the test's thread (where the platform under test
// runs, and where the relay ran until a quality suite's clean calls went unjudged in about half the CI
// runs: the relay read a stalled loop's burst as a late path) neither holds the relay's packets nor reads
// as their lateness. A sender on its own thread sends 100 packets through the relay while this thread is
// blocked 600 ms: every one is forwarded, and the worst lateness is the sender's and the relay's threads',
// far under the stall. The relay's loss and counts are read across the threads.
import { expect } from 'chai';
import dgram from 'node:dgram';
import { LossyRelay } from '../../testkit/lossy-relay';
import { pacedSender, stallThread } from '../../testkit/thread-stall';
import { until } from '../../testkit/poll';

const PACKETS = 100;
const STALL_MS = 600;

/** PCMU packet `n` of one stream: 20 ms of 8 kHz. */
function packet(n: number): Buffer {
  const p = Buffer.alloc(12 + 160, 0xff);
  p[0] = 0x80;
  p[1] = 0;
  p.writeUInt16BE(n, 2);
  p.writeUInt32BE(n * 160, 4);
  p.writeUInt32BE(0x7e1a7, 8);
  return p;
}

describe('testkit LossyRelay: a path on a thread of its own', function () {
  this.timeout(20_000);
  let sink: dgram.Socket;
  let got = 0;
  let sinkErrors: string[] = [];
  beforeEach(async () => {
    got = 0;
    sinkErrors = [];
    sink = dgram.createSocket('udp4');
    sink.on('error', (e) => sinkErrors.push(e.message));
    sink.on('message', () => got++);
    await new Promise<void>((resolve) => sink.bind(0, '127.0.0.1', resolve));
  });
  afterEach(() => {
    sink.close();
    expect(sinkErrors, 'errors on the sink').to.deep.equal([]);
  });

  /** Sends the stream from a thread of its own through `relay` to the sink; `during` runs once 20 packets went through. */
  async function stream(relay: LossyRelay, during: () => void): Promise<void> {
    const sender = await pacedSender(
      Array.from({ length: PACKETS }, (_, i) => packet(i + 1)),
      relay.near.rtpPort,
    );
    try {
      await relay.setFarPeer('127.0.0.1', sink.address().port);
      sender.go();
      await until(() => relay.counts.toFar.rtpIn >= 20, 5000, '20 packets at the relay');
      during();
      await sender.done;
    } finally {
      await sender.stop();
    }
  }

  it(`a ${STALL_MS} ms stall of the test's thread: every packet forwarded, none read as late by the stall`, async () => {
    const relay = await LossyRelay.open({ seed: 3 });
    try {
      await stream(relay, () => stallThread(STALL_MS));
      await until(() => got === PACKETS || null, 5000, `${PACKETS} packets at the sink`);
      const c = relay.counts.toFar;
      expect({ rtpIn: c.rtpIn, dropped: c.dropped, forwarded: c.forwarded }).to.deep.equal({ rtpIn: PACKETS, dropped: 0, forwarded: PACKETS });
      // a relay on the test's thread reads the stall's burst ~STALL_MS late; its own thread only its scheduling
      expect(relay.lateness.toFar.worstMs, 'worst lateness (ms)').to.be.below(STALL_MS / 2);
      expect(relay.lateness.toNear.worstMs, 'nothing came the other way').to.equal(0);
    } finally {
      await relay.close();
    }
  });

  it('10 % loss: exactly a tenth dropped, the rest forwarded, every delayed one out once held', async () => {
    const relay = await LossyRelay.open({ toFar: { lossPct: 10, jitterMs: 5 }, seed: 3 });
    try {
      await stream(relay, () => undefined);
      await relay.hold();
      const c = relay.counts.toFar;
      expect({ rtpIn: c.rtpIn, dropped: c.dropped, forwarded: c.forwarded }).to.deep.equal({ rtpIn: PACKETS, dropped: PACKETS / 10, forwarded: PACKETS - PACKETS / 10 });
      await until(() => got === c.forwarded || null, 5000, 'the forwarded packets at the sink');
    } finally {
      await relay.close();
    }
  });

  it('a closed relay refuses what is asked of it after', async () => {
    const relay = await LossyRelay.open({});
    await relay.close();
    const err = await relay.hold().then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/closed/);
  });
});
