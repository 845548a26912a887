// An SDP may name its far end by a host name (media-engine/worker/rtp-transport.ts resolvePeer): the session asks
// for the lookup when the SDP comes and again at each send while the peer has no address, so a failed lookup is
// tried again. A name that never resolves must not become a DNS query per packet (50 a second per leg): after a
// failure the next lookup waits RESOLVE_RETRY_MS. Real lookups (getaddrinfo: /etc/hosts, the .invalid TLD that
// never resolves, RFC 6761), counted by wrapping dns.lookup, which still answers.
import { expect } from 'chai';
import dns from 'node:dns';
import { peer, resolvePeer, RESOLVE_RETRY_MS } from '../../media-engine/worker/rtp-transport';
import { until } from '../../testkit/poll';

describe('media-engine resolvePeer: host names in an SDP', () => {
  const original = dns.lookup;
  const lookups: { host: string; at: number; doneAt: number | null }[] = [];
  before(() => {
    const counting = (host: string, opts: dns.LookupOptions, cb: (err: NodeJS.ErrnoException | null, address: string, family: number) => void) => {
      const l: { host: string; at: number; doneAt: number | null } = { host, at: performance.now(), doneAt: null };
      lookups.push(l);
      original(host, opts, (err, address, family) => {
        l.doneAt = performance.now();
        cb(err, address as string, family as number);
      });
    };
    (dns as { lookup: unknown }).lookup = counting;
  });
  after(() => void ((dns as { lookup: unknown }).lookup = original));
  beforeEach(() => void (lookups.length = 0));

  it('one lookup fills the RTP and RTCP peers; an IP literal (0.0.0.0 too) is never looked up', async () => {
    const rtp = peer('localhost', 4000);
    const rtcp = peer('localhost', 4001);
    resolvePeer(rtp, rtcp);
    resolvePeer(rtp, rtcp); // one at a time: the second ask while the first is out starts none
    await until(() => rtp.ip !== 0, 5000, 'localhost looked up');
    expect([rtp.ip, rtcp.ip]).to.deep.equal([0x7f000001, 0x7f000001]);
    resolvePeer(peer('0.0.0.0', 4000));
    resolvePeer(peer('127.0.0.1', 4000));
    expect(lookups.map((l) => l.host)).to.deep.equal(['localhost']);
  });

  it('a name that does not resolve: asked at every send, looked up again only RESOLVE_RETRY_MS after each failure', async () => {
    const p = peer('nonexistent.invalid', 4000);
    const t0 = performance.now();
    // the session's asks (one per send; here one per 50 ms poll) until a third lookup has started
    await until(() => (resolvePeer(p), lookups.length >= 3), 3 * RESOLVE_RETRY_MS + 2000, 'a third lookup');
    const elapsed = performance.now() - t0;
    expect(p.ip).to.equal(0);
    expect(
      lookups.every((l, i) => i === 0 || l.at - lookups[i - 1]!.doneAt! >= RESOLVE_RETRY_MS - 1),
      JSON.stringify(lookups),
    ).to.equal(true);
    expect(elapsed).to.be.at.least(2 * RESOLVE_RETRY_MS);
  });
});
