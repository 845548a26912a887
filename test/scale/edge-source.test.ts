// The node's side of the edge, as pure functions and settings: X-Openvoice-Source parsing, which
// sources are trusted proxies (non-loopback ranges only here, no packet sent), the settings' checks.
import { expect } from 'chai';
import { parseCidrList } from '../../core/net/address';
import { ConfigError } from '../../core/config';
import { loadMediaAppConfig } from '../../media-app/kit/config';
import { isTrustedProxy, parseSourceHeader } from '../../media-app/kit/edge';

describe('scale: the edge source header and trusted proxies', () => {
  it('parses the header the edge writes (IPv4, IPv6 with or without brackets) and refuses anything else', () => {
    expect(parseSourceHeader('udp:192.0.2.10:5062')).to.deep.equal({ protocol: 'udp', address: '192.0.2.10', port: 5062 });
    expect(parseSourceHeader('TCP:[2001:db8::5]:5060')).to.deep.equal({ protocol: 'tcp', address: '2001:db8::5', port: 5060 });
    expect(parseSourceHeader('ws:2001:db8::5:8080')).to.deep.equal({ protocol: 'ws', address: '2001:db8::5', port: 8080 });
    for (const bad of [
      undefined,
      '',
      'udp:192.0.2.10',
      'udp:host.example:5060',
      'foo:192.0.2.1:5060',
      'udp:192.0.2.1:0',
      'udp:192.0.2.1:70000',
      'udp:999.1.1.1:5060',
      'udp:192.0.2.1:5060, udp:192.0.2.2:5060',
    ]) {
      expect(parseSourceHeader(bad), String(bad)).to.equal(null);
    }
  });

  it('trusts only the configured edge ranges (none by default)', () => {
    const edges = parseCidrList('10.20.0.0/24, 2001:db8:e::/48');
    expect(isTrustedProxy('10.20.0.7', edges)).to.equal(true);
    expect(isTrustedProxy('::ffff:10.20.0.7', edges)).to.equal(true);
    expect(isTrustedProxy('2001:db8:e::1', edges)).to.equal(true);
    expect(isTrustedProxy('10.20.1.7', edges)).to.equal(false);
    expect(isTrustedProxy('203.0.113.9', edges)).to.equal(false);
    expect(isTrustedProxy('not-an-ip', edges)).to.equal(false);
    expect(isTrustedProxy('10.20.0.7', [])).to.equal(false);
  });

  it('SIP_TRUSTED_PROXIES and DRAIN_TIMEOUT_SEC: defaults, and a bad value stops the start with the setting named', () => {
    const base = { MEDIA_APP_NODE_ID: 'n1' };
    const d = loadMediaAppConfig(base);
    expect(d.trustedProxies).to.deep.equal([]);
    expect(d.drainTimeoutMs).to.equal(300_000);
    expect(d.heartbeatMs).to.equal(1000);
    expect(loadMediaAppConfig({ ...base, SIP_TRUSTED_PROXIES: '10.20.0.0/24', DRAIN_TIMEOUT_SEC: '0' })).to.deep.include({ drainTimeoutMs: 0 });
    for (const [k, v] of [
      ['SIP_TRUSTED_PROXIES', 'edge.example'],
      ['SIP_TRUSTED_PROXIES', '10.0.0.0/33'],
      ['DRAIN_TIMEOUT_SEC', '-1'],
      ['DRAIN_TIMEOUT_SEC', 'soon'],
    ] as const) {
      let err: unknown;
      try {
        loadMediaAppConfig({ ...base, [k]: v });
      } catch (e) {
        err = e;
      }
      expect(err, `${k}=${v}`).to.be.instanceOf(ConfigError);
      expect((err as Error).message).to.include(k);
    }
  });
});
