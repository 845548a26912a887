// Digest arithmetic against the RFCs' own examples, nonce sealing, and config validation.
import { expect } from 'chai';
import { challenges, digestResponse, NonceSealer, nonceCount, parseCredentials, parseDigest, verifyResponse } from '../../media-app/kit/sip-digest';
import { loadMediaAppConfig } from '../../media-app/kit/config';
import { ConfigError } from '../../core/config';
import { parseSipUri } from '../../media-app/kit/sip-uri';

describe('media-app digest', () => {
  it('computes the RFC 2617 §3.5 MD5 example', () => {
    const r = digestResponse(
      { username: 'Mufasa', realm: 'testrealm@host.com', nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093', uri: '/dir/index.html', algorithm: 'MD5', qop: 'auth', nc: '00000001', cnonce: '0a4f113b' },
      'GET',
      'Circle Of Life',
    );
    expect(r).to.equal('6629fae49393a05397450978507c4ef1');
  });

  it('computes the RFC 7616 §3.9.1 SHA-256 example', () => {
    const r = digestResponse(
      {
        username: 'Mufasa',
        realm: 'http-auth@example.org',
        nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
        uri: '/dir/index.html',
        algorithm: 'SHA-256',
        qop: 'auth',
        nc: '00000001',
        cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
      },
      'GET',
      'Circle of Life',
    );
    expect(r).to.equal('753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1');
  });

  it('parses Authorization headers and refuses malformed or unknown-algorithm ones', () => {
    const h = 'Digest username="a\\"b", realm="r", nonce="n", uri="sip:x", response="ABC", algorithm=SHA-256, qop=auth, nc=00000001, cnonce="c"';
    expect(parseCredentials(h)).to.deep.include({ username: 'a"b', algorithm: 'SHA-256', response: 'abc', qop: 'auth' });
    expect(parseCredentials('Basic dXNlcjpwYXNz')).to.equal(null);
    expect(parseCredentials('Digest username="a", realm="r", nonce="n", uri="u", response="x", algorithm=SHA-512-256')).to.equal(null);
    expect(parseCredentials('Digest username="a", realm="r", nonce="n", uri="u"')).to.equal(null);
    expect(parseCredentials('Digest username="a", realm="r", nonce="n", uri="u", response="x", qop=auth')).to.equal(null); // no cnonce/nc
    // default: MD5 alone (libre/baresip 1.0 gives up on any line that is not MD5)
    expect(challenges('d.example', 'n1').map((c) => parseDigest(c)!.algorithm)).to.deep.equal(['MD5']);
    expect(challenges('d.example', 'n1', { order: ['MD5', 'SHA-256'] }).map((c) => parseDigest(c)!.algorithm)).to.deep.equal(['MD5', 'SHA-256']);
    expect(parseDigest(challenges('d.example', 'n1', { order: ['SHA-256'] })[0]!)).to.deep.include({ realm: 'd.example', algorithm: 'SHA-256', qop: 'auth' });
  });

  it('seals nonces: valid, stale after the lifetime, invalid when forged, for another realm or another address', () => {
    let now = 1_000_000;
    const s = new NonceSealer('secret', 300_000, () => now);
    const n = s.issue('a.example', '192.0.2.7');
    expect(s.issue('a.example', '192.0.2.7'), 'two challenges in one millisecond differ').to.not.equal(n);
    expect(s.check(n, 'a.example', '192.0.2.7')).to.deep.equal({ state: 'valid', ttlMs: 305_000 });
    expect(s.check(n, 'b.example', '192.0.2.7').state).to.equal('invalid');
    expect(s.check(n, 'a.example', '192.0.2.8').state, 'issued to another address').to.equal('invalid');
    expect(s.check(n.slice(0, -1) + (n.endsWith('A') ? 'B' : 'A'), 'a.example', '192.0.2.7').state).to.equal('invalid');
    expect(new NonceSealer('other', 300_000, () => now).check(n, 'a.example', '192.0.2.7').state).to.equal('invalid');
    expect(s.check('garbage', 'a.example', '192.0.2.7').state).to.equal('invalid');
    // an IPv6 source counts by its /64, like the lockout
    const v6 = s.issue('a.example', '2001:db8:1:2::10');
    expect(s.check(v6, 'a.example', '2001:db8:1:2::99').state).to.equal('valid');
    expect(s.check(v6, 'a.example', '2001:db8:1:3::10').state).to.equal('invalid');
    now += 100_000;
    expect(s.check(n, 'a.example', '192.0.2.7')).to.deep.equal({ state: 'valid', ttlMs: 205_000 });
    now += 200_001;
    expect(s.check(n, 'a.example', '192.0.2.7').state).to.equal('stale');
  });

  it('counts nonces: nc in hex with qop, 1 without, null when not a count', () => {
    const c = { username: 'u', realm: 'r', nonce: 'n', uri: 'sip:r', algorithm: 'MD5' as const, response: 'x' };
    expect(nonceCount(c)).to.equal(1);
    expect(nonceCount({ ...c, qop: 'auth', cnonce: 'c', nc: '00000001' })).to.equal(1);
    expect(nonceCount({ ...c, qop: 'auth', cnonce: 'c', nc: '0000001a' })).to.equal(26);
    expect(nonceCount({ ...c, qop: 'auth', cnonce: 'c', nc: '00000000' })).to.equal(null);
    expect(nonceCount({ ...c, qop: 'auth', cnonce: 'c', nc: 'zz' })).to.equal(null);
    expect(nonceCount({ ...c, qop: 'auth', cnonce: 'c', nc: '123456789' })).to.equal(null);
  });

  it('verifies in both algorithms and rejects a wrong password', () => {
    for (const algorithm of ['MD5', 'SHA-256'] as const) {
      const c = { username: 'u', realm: 'r', nonce: 'n', uri: 'sip:r', algorithm, qop: 'auth', nc: '00000001', cnonce: 'x' };
      const response = digestResponse(c, 'REGISTER', 'pw');
      expect(verifyResponse({ ...c, response }, 'REGISTER', 'pw')).to.equal(true);
      expect(verifyResponse({ ...c, response }, 'REGISTER', 'pw2')).to.equal(false);
      expect(verifyResponse({ ...c, response }, 'INVITE', 'pw')).to.equal(false);
    }
  });
});

describe('media-app config and URIs', () => {
  it('has defaults and names every bad variable', () => {
    const c = loadMediaAppConfig({});
    expect(c.drachtio).to.deep.equal({ host: '127.0.0.1', port: 9022, secret: 'cymru' });
    expect(c.registrar.algorithms).to.deep.equal(['MD5']);
    expect(loadMediaAppConfig({ SIP_DIGEST_ALGORITHMS: 'sha-256, md5' }).registrar.algorithms).to.deep.equal(['SHA-256', 'MD5']);
    expect(c.nodeId).to.match(/^[A-Za-z0-9._-]+$/);
    try {
      loadMediaAppConfig({ DRACHTIO_PORT: 'x', RTP_PORT_MIN: '30000', RTP_PORT_MAX: '20000', SIP_DIGEST_ALGORITHMS: 'SHA-1' });
      expect.fail('should throw');
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      const text = (err as ConfigError).problems.join('\n');
      expect(text).to.include('DRACHTIO_PORT').and.include('SIP_DIGEST_ALGORITHMS');
    }
    expect(() => loadMediaAppConfig({ RTP_PORT_MIN: '30000', RTP_PORT_MAX: '20000' })).to.throw(ConfigError, /RTP_PORT_MIN/);
    // real-time media workers: off unless a priority is given; bad values refused by name
    expect(c.rtp.workerRealtime).to.equal(undefined);
    expect(loadMediaAppConfig({ MEDIA_WORKER_RT_PRIORITY: '10' }).rtp.workerRealtime).to.deep.equal({ priority: 10, maxCpuShare: 0.8 });
    expect(loadMediaAppConfig({ MEDIA_WORKER_RT_PRIORITY: '5', MEDIA_WORKER_RT_MAX_CPU: '0.5' }).rtp.workerRealtime).to.deep.equal({ priority: 5, maxCpuShare: 0.5 });
    for (const bad of [{ MEDIA_WORKER_RT_PRIORITY: '0' }, { MEDIA_WORKER_RT_PRIORITY: '100' }, { MEDIA_WORKER_RT_PRIORITY: 'high' }, { MEDIA_WORKER_RT_PRIORITY: '1.5' }]) {
      expect(() => loadMediaAppConfig(bad), JSON.stringify(bad)).to.throw(ConfigError, /MEDIA_WORKER_RT_PRIORITY/);
    }
    expect(() => loadMediaAppConfig({ MEDIA_WORKER_RT_MAX_CPU: '2' })).to.throw(ConfigError, /MEDIA_WORKER_RT_MAX_CPU/);
  });

  it('parses SIP and tel URIs', () => {
    expect(parseSipUri('sip:+15551234@Trunk.Example:5070;transport=tcp')).to.deep.equal({ scheme: 'sip', user: '+15551234', host: 'trunk.example', port: 5070 });
    expect(parseSipUri('sip:example.com')).to.deep.include({ user: '', host: 'example.com' });
    expect(parseSipUri('tel:+1555')).to.deep.include({ scheme: 'tel', user: '+1555' });
    expect(parseSipUri('http://x')).to.equal(null);
  });
});
