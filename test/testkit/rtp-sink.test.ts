// testkit's RtpSink counts one sender: the one it is told, else the first that sends it RTP (latched).
// What any other sends is dropped and counted as dropped, so a test cannot pass on a stray packet. A sink
// many calls share says so (`many`) and counts every sender. Real UDP on loopback.
import { expect } from 'chai';
import dgram from 'node:dgram';
import { RtpSink, type RtpSender } from '../../testkit/media-app/rtp-sink';
import { until } from '../../testkit/media-app/harness';

/** A UDP socket on loopback sending 20 ms PCMU packets of a loud square wave (seq numbered). */
async function party(): Promise<{ from: RtpSender; send(to: number, n: number): void; garbage(to: number): void; close(): void }> {
  const sock = dgram.createSocket('udp4');
  sock.on('error', () => undefined);
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  let seq = 0;
  return {
    from: { address: '127.0.0.1', port: sock.address().port },
    send(to, n) {
      for (let i = 0; i < n; i++) {
        const pkt = Buffer.alloc(172, 0x80); // µ-law 0x80: near full scale
        pkt[0] = 0x80;
        pkt[1] = 0;
        pkt.writeUInt16BE(++seq, 2);
        pkt.writeUInt32BE(seq * 160, 4);
        pkt.writeUInt32BE(0x1234, 8);
        for (let j = 12; j < 172; j += 2) pkt[j] = 0x00; // alternate signs: a loud square wave
        sock.send(pkt, to, '127.0.0.1');
      }
    },
    garbage(to) {
      sock.send(Buffer.from('not rtp'), to, '127.0.0.1');
    },
    close: () => sock.close(),
  };
}

describe('testkit: RtpSink counts the sender it is told or the first, and says what it dropped', () => {
  const open: { close(): void }[] = [];
  afterEach(() => {
    for (const o of open.splice(0)) o.close();
  });
  const parties = async () => {
    const [a, b] = [await party(), await party()];
    open.push(a, b);
    return [a, b] as const;
  };
  const arrived = (sink: RtpSink, n: number) => until(() => sink.packets + sink.dropped >= n, 5000, `${n} datagrams at the sink`);

  it('latches the first sender: a second one is dropped and counted, its packets in no figure', async () => {
    const sink = await RtpSink.open();
    open.push(sink);
    const [a, b] = await parties();
    expect(sink.sender, 'nothing latched before RTP').to.equal(null);
    // a datagram that is not RTP latches nothing: a's RTP after it is what counts
    b.garbage(sink.port);
    a.send(sink.port, 3);
    await arrived(sink, 3);
    b.send(sink.port, 2);
    a.send(sink.port, 2);
    await arrived(sink, 7);
    expect(sink.sender).to.deep.equal(a.from);
    expect(sink.packets, "a's packets only").to.equal(5);
    expect(sink.dropped, "b's RTP after the latch").to.equal(2);
    expect(sink.levels).to.have.length(5);
    expect(sink.voiced).to.equal(5);
  });

  it('counts only the sender it is told, even when another sends first', async () => {
    const [a, b] = await parties();
    const sink = await RtpSink.open({ from: b.from });
    open.push(sink);
    a.send(sink.port, 4);
    b.send(sink.port, 3);
    await arrived(sink, 7);
    expect(sink.sender).to.deep.equal(b.from);
    expect([sink.packets, sink.dropped]).to.deep.equal([3, 4]);
  });

  it('a sink many calls share counts every sender; it cannot also be told one', async () => {
    const [a, b] = await parties();
    const sink = await RtpSink.open({ many: true });
    open.push(sink);
    a.send(sink.port, 2);
    b.send(sink.port, 3);
    await arrived(sink, 5);
    expect([sink.packets, sink.dropped, sink.sender]).to.deep.equal([5, 0, null]);
    const both = await RtpSink.open({ many: true, from: a.from }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(both).to.match(/not both/);
  });
});
