/**
 * Review: the flood protection trusted a whole address, unthrottled and never banned, for an hour
 * after the application answered one INVITE from it without credentials (a trunk authenticated by
 * address). allowed_ips are customer input: anyone who signs up can create a trunk for its own
 * address, place one answered call and then flood sip-server at any rate. A trusted address stays
 * never banned (a busy trunk keeps working) but is throttled at the address share
 * (SIP_ADDRESS_RATE_FACTOR x the per-port rate and burst); only SIP_ALLOWLIST is unlimited.
 * Pure decisions of the limiter: no socket, no packet.
 */
import { expect } from 'chai';
import { SourceRateLimiter, type RateLimitOptions } from '../../sip-server/security/rate-limit';

const OPTS: RateLimitOptions = { requestsPerSecond: 10, burst: 10, banThreshold: 20, banSeconds: 60, addressBanPorts: 3, addressRateFactor: 4, allowlist: ['198.51.100.0/24'] };

describe('security review: an address trusted from an answered INVITE is throttled, never banned', () => {
  let l: SourceRateLimiter;
  beforeEach(() => (l = new SourceRateLimiter(OPTS)));
  afterEach(() => l.close());

  it('1,000 requests in one millisecond: the address share passes, the rest is throttled, nothing is banned', () => {
    l.trust({ scope: 'address', address: '192.0.2.5', seconds: 3600 });
    const verdicts = { allow: 0, throttle: 0, banned: 0 };
    for (let i = 0; i < 1000; i++) verdicts[l.take('192.0.2.5', 40_000 + (i % 50), 1000)]++;
    expect(verdicts.allow).to.equal(OPTS.burst * OPTS.addressRateFactor);
    expect(verdicts.banned).to.equal(0);
    expect(l.isBanned('192.0.2.5', 40_000, 1001)).to.equal(false);
    // a second later the share is there again
    expect(l.take('192.0.2.5', 40_000, 2000)).to.equal('allow');
  });

  it('an allow-listed address stays unlimited', () => {
    let allowed = 0;
    for (let i = 0; i < 1000; i++) if (l.take('198.51.100.7', 1, 1000) === 'allow') allowed++;
    expect(allowed).to.equal(1000);
  });
});
