/**
 * Strict RTP's decisions (media-engine/worker/rtp-source.ts), packet by packet on virtual arrival times: which
 * source a leg latches to, what it drops once latched, re-latching only through a probation of packets in
 * sequence, raw-socket senders with source port 0 (sipp's pcap play), a re-INVITE starting learning over, and
 * RTCP. The same rules against real sockets, for JS and C legs: strict-rtp.test.ts.
 */
import { expect } from 'chai';
import { LEARN_MIN_SEQUENTIAL, RELATCH_AFTER_MS, SourceLatch } from '../../media-engine/worker/rtp-source';
import { ipv4ToInt, resolvePeer } from '../../media-engine/worker/rtp-transport';
import { until } from '../../testkit/poll';

const HOST = ipv4ToInt('127.0.0.1')!;
const OTHER_HOST = ipv4ToInt('127.0.0.2')!;
const SDP_PORT = 40000;
const NAT_PORT = 50000;
const ATTACKER_PORT = 60000;

/** A leg whose SDP names 127.0.0.1:40000, RTCP on 40001. */
function leg(): SourceLatch {
  const s = new SourceLatch();
  s.signalled('127.0.0.1', SDP_PORT, SDP_PORT + 1);
  return s;
}

/** `n` packets in sequence from `port` (sequence numbers from `seq0`), 20 ms apart from `t0`: which were taken. */
function sendRun(s: SourceLatch, ip: number, port: number, seq0: number, n: number, t0: number): boolean[] {
  return Array.from({ length: n }, (_, i) => s.admit(ip, port, (seq0 + i) & 0xffff, t0 + i * 20));
}

describe('media-engine strict RTP: the source a leg latches to (virtual time)', () => {
  it("the SDP's address is latched at its first packet; then another port's packets are dropped and counted", () => {
    const s = leg();
    expect(s.admit(HOST, SDP_PORT, 7, 0)).to.equal(true);
    expect(s.latched).to.equal(true);
    expect(sendRun(s, HOST, ATTACKER_PORT, 100, 10, 20)).to.deep.equal(Array(10).fill(false));
    expect(sendRun(s, OTHER_HOST, SDP_PORT, 100, 2, 40)).to.deep.equal([false, false]);
    expect(s.foreignDropped).to.equal(12);
    expect(s.remote).to.deep.include({ ip: HOST, port: SDP_PORT });
  });

  it('a far end behind a NAT is latched after 4 packets in sequence, not at its first, and is answered there', () => {
    expect(LEARN_MIN_SEQUENTIAL).to.equal(4);
    const s = leg();
    // out of sequence (a gap, a repeat) starts the probation over
    expect(s.admit(HOST, NAT_PORT, 10, 0)).to.equal(false);
    expect(s.admit(HOST, NAT_PORT, 12, 20)).to.equal(false);
    expect(s.admit(HOST, NAT_PORT, 12, 40)).to.equal(false);
    expect(sendRun(s, HOST, NAT_PORT, 13, 4, 60)).to.deep.equal([false, false, true, true]);
    expect(s.remote).to.deep.include({ ip: HOST, port: NAT_PORT });
    expect(s.remoteRtcp).to.deep.include({ ip: HOST, port: NAT_PORT + 1 });
    expect(s.foreignDropped).to.equal(5);
    // the sequence wraps without ending anything
    const w = leg();
    expect(sendRun(w, HOST, NAT_PORT, 0xfffe, 5, 0)).to.deep.equal([false, false, false, true, true]);
  });

  it("another source's packets between the candidate's start its probation over: no one latches by interleaving", () => {
    const s = leg();
    for (let i = 0; i < 10; i++) {
      expect(s.admit(HOST, NAT_PORT, 100 + i, i * 20)).to.equal(false);
      expect(s.admit(HOST, ATTACKER_PORT, 500 + i, i * 20 + 10)).to.equal(false);
    }
    expect(s.latched).to.equal(false);
    expect(s.remote).to.deep.include({ port: SDP_PORT });
  });

  it('after the latched source is quiet past the re-latch time, one packet does not take the call; a stream in sequence does', () => {
    const s = leg();
    sendRun(s, HOST, SDP_PORT, 1, 10, 0); // latched; its last packet at 180 ms
    // within the re-latch time: even a stream in sequence is dropped
    expect(sendRun(s, HOST, ATTACKER_PORT, 900, 10, 200)).to.deep.equal(Array(10).fill(false));
    const quiet = 180 + RELATCH_AFTER_MS + 1;
    expect(s.admit(HOST, ATTACKER_PORT, 5000, quiet)).to.equal(false);
    expect(s.remote).to.deep.include({ port: SDP_PORT });
    // the latched source comes back: taken; the attacker's probation ended
    expect(s.admit(HOST, SDP_PORT, 11, quiet + 5)).to.equal(true);
    expect(s.admit(HOST, ATTACKER_PORT, 5001, quiet + 25)).to.equal(false);
    // quiet again: a new source streaming in sequence takes the call at its 4th packet
    const later = quiet + 5 + RELATCH_AFTER_MS + 1;
    expect(sendRun(s, HOST, NAT_PORT, 42, 6, later)).to.deep.equal([false, false, false, true, true, true]);
    expect(s.remote).to.deep.include({ ip: HOST, port: NAT_PORT });
    // the RTCP address stays the one learnt at the first latch (as before strict RTP)
    expect(s.remoteRtcp).to.deep.include({ port: SDP_PORT + 1 });
    // now another source (not the signalled one: it re-takes the latch, below) is a foreign one
    expect(s.admit(HOST, ATTACKER_PORT, 5002, later + 200)).to.equal(false);
    expect(s.foreignDropped).to.equal(10 + 1 + 1 + 3 + 1);
  });

  it('the signalled address re-takes the latch at once from a source that took it in its silence (hold, DTX)', () => {
    const s = leg();
    sendRun(s, HOST, SDP_PORT, 1, 10, 0); // latched; its last at 180 ms
    // the party goes quiet; past the re-latch time another source streams in sequence and takes the latch
    const quiet = 180 + RELATCH_AFTER_MS + 1;
    expect(sendRun(s, HOST, ATTACKER_PORT, 900, 6, quiet)).to.deep.equal([false, false, false, true, true, true]);
    expect(s.remote).to.deep.include({ port: ATTACKER_PORT });
    // the party comes back (unhold) while the other keeps sending: the party is taken at once and answered
    expect(s.admit(HOST, SDP_PORT, 11, quiet + 130)).to.equal(true);
    expect(s.remote).to.deep.include({ ip: HOST, port: SDP_PORT });
    expect(s.remoteRtcp).to.deep.include({ ip: HOST, port: SDP_PORT + 1 });
    expect(sendRun(s, HOST, ATTACKER_PORT, 906, 3, quiet + 140)).to.deep.equal([false, false, false]);
    expect(sendRun(s, HOST, SDP_PORT, 12, 3, quiet + 150)).to.deep.equal([true, true, true]);
    expect(s.foreignDropped).to.equal(3 + 3);
  });

  it('an SDP naming a host (c=IN IP4 a name): once the lookup fills it in, its address is the signalled one, re-taking the latch', async () => {
    const s = new SourceLatch();
    s.signalled('localhost', SDP_PORT, SDP_PORT + 1);
    expect(s.remote).to.deep.include({ ip: 0, port: SDP_PORT });
    // the session's lookup (rtp-session.ts setMedia): one answer for RTP and RTCP
    resolvePeer(s.remote!, s.remoteRtcp!);
    await until(() => s.remote!.ip !== 0, 5000, 'localhost looked up');
    expect(s.remote).to.deep.include({ ip: HOST, port: SDP_PORT });
    expect(s.remoteRtcp).to.deep.include({ ip: HOST, port: SDP_PORT + 1 });
    sendRun(s, HOST, SDP_PORT, 1, 10, 0); // latched at its first packet; its last at 180 ms
    const quiet = 180 + RELATCH_AFTER_MS + 1;
    expect(sendRun(s, HOST, ATTACKER_PORT, 900, 6, quiet)).to.deep.equal([false, false, false, true, true, true]);
    expect(s.admit(HOST, SDP_PORT, 11, quiet + 130), 'the signalled address, back').to.equal(true);
    expect(s.remote).to.deep.include({ ip: HOST, port: SDP_PORT });
  });

  it('before the first latch: another source that passed its probation first yields to the signalled address at its first packet', () => {
    const s = leg();
    expect(sendRun(s, HOST, ATTACKER_PORT, 500, 5, 0)).to.deep.equal([false, false, false, true, true]);
    expect(s.remote).to.deep.include({ port: ATTACKER_PORT });
    expect(s.admit(HOST, SDP_PORT, 1, 100)).to.equal(true);
    expect(s.remote).to.deep.include({ port: SDP_PORT });
    expect(s.admit(HOST, ATTACKER_PORT, 505, 110)).to.equal(false);
    // a re-INVITE moves the signalled address: the old one is another source from then on
    s.signalled('127.0.0.2', 41000, 41001);
    sendRun(s, OTHER_HOST, 41000, 1, 2, 200);
    expect(s.admit(HOST, SDP_PORT, 2, 240)).to.equal(false);
    expect(s.remote).to.deep.include({ ip: OTHER_HOST, port: 41000 });
  });

  it('a raw-socket sender with source port 0 (sipp pcap play) is taken while nothing is latched and never latched to', () => {
    const s = leg();
    expect(sendRun(s, HOST, 0, 1, 20, 0)).to.deep.equal(Array(20).fill(true));
    expect(s.latched).to.equal(false);
    expect(s.remote).to.deep.include({ port: SDP_PORT });
    expect(s.foreignDropped).to.equal(0);
    // once a real source is latched: a port-0 packet from its IP is taken (a raw sender on its host), from another
    // IP it is one from another source; never latched to
    s.admit(HOST, SDP_PORT, 1, 500);
    expect(s.admit(HOST, 0, 21, 520)).to.equal(true);
    expect(s.admit(OTHER_HOST, 0, 22, 540)).to.equal(false);
    expect(s.admit(OTHER_HOST, 0, 23, 560 + RELATCH_AFTER_MS * 5)).to.equal(false);
    expect(s.remote).to.deep.include({ port: SDP_PORT });
    expect(s.foreignDropped).to.equal(2);
  });

  it('a re-INVITE to a new far end starts learning over', () => {
    const s = leg();
    sendRun(s, HOST, NAT_PORT, 1, 5, 0);
    expect(s.remote).to.deep.include({ port: NAT_PORT });
    s.signalled('127.0.0.2', 41000, 41001);
    expect(s.latched).to.equal(false);
    expect(s.remote).to.deep.include({ ip: OTHER_HOST, port: 41000 });
    expect(s.admit(OTHER_HOST, 41000, 77, 200)).to.equal(true);
    expect(s.admit(HOST, NAT_PORT, 6, 220)).to.equal(false);
  });

  it('RTCP: from anyone before a source is latched, then from its address only (any port on the RTCP port, its own port multiplexed)', () => {
    const s = leg();
    expect(s.admitRtcp(OTHER_HOST, 9, false)).to.equal(true);
    s.admit(HOST, SDP_PORT, 1, 0);
    expect(s.admitRtcp(HOST, 33333, false), 'a NAT maps RTCP to a port of its own').to.equal(true);
    expect(s.admitRtcp(OTHER_HOST, SDP_PORT + 1, false)).to.equal(false);
    expect(s.admitRtcp(HOST, SDP_PORT, true)).to.equal(true);
    expect(s.admitRtcp(HOST, ATTACKER_PORT, true)).to.equal(false);
    expect(s.rtcpDropped).to.equal(2);
    expect(s.foreignDropped).to.equal(0);
  });

  it('its state goes to a C leg and back whole (leg-layout.ts): a probation half done goes on', () => {
    const s = leg();
    sendRun(s, HOST, SDP_PORT, 1, 3, 0); // its last at 40 ms
    expect(sendRun(s, HOST, NAT_PORT, 90, 2, 1100)).to.deep.equal([false, false]);
    const v = new Float64Array(400);
    s.saveTo(v);
    const t = new SourceLatch();
    t.loadFrom(v);
    expect(t.latched).to.equal(true);
    expect(t.foreignDropped).to.equal(2);
    expect(t.admit(HOST, NAT_PORT, 92, 1140)).to.equal(false);
    expect(t.admit(HOST, NAT_PORT, 93, 1160), 'its 4th in sequence').to.equal(true);
    // the signalled address went with it: it takes the latch back
    expect(t.admit(HOST, SDP_PORT, 4, 1180)).to.equal(true);
    expect(t.remote).to.deep.include({ port: SDP_PORT });
  });
});
