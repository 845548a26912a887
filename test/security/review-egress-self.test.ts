/**
 * Review: the platform's own address is refused "even inside the allowlist", but an IPv6 form that
 * carries it (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) was classed public and
 * allowed: `http://[::ffff:<the platform's public IPv4>]:6379/` reached the host's own services.
 * Pure checks (verdict, assertUrlSyntax): no connection is opened, no packet leaves.
 */
import { expect } from 'chai';
import { EgressPolicy, egressSettingsFromEnv, EgressRefused } from '../../core/net';

describe("security review: IPv6 forms of the platform's own address are the platform", () => {
  // 8.8.8.8 stands for the platform's public address; nothing is sent to it
  const p = new EgressPolicy(egressSettingsFromEnv({ SIP_ADVERTISED_HOST: '8.8.8.8', EGRESS_ALLOW_CIDRS: '8.8.8.0/24' }));
  for (const form of ['::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::808:808', '2002:808:808::1']) {
    it(`${form} is refused as self`, () => {
      expect(p.verdict(form)).to.equal('self');
      expect(() => p.assertUrlSyntax(`http://[${form}]:6379/`)).to.throw(EgressRefused, /this platform itself/);
    });
  }
  it('another public address and its mapped form stay allowed', () => {
    expect(p.verdict('8.8.4.4')).to.equal(null);
    expect(p.verdict('::ffff:8.8.4.4')).to.equal(null);
  });
});
