// The pure parts of outbound registration: the state table, refresh and backoff timing, the granted
// expiry read from a 200, and the digest answer to a registrar's challenge.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { nextState, refreshDelayMs, retryDelayMs } from '../../media-app/outreg/registration';
import { answerChallenge, grantedExpiry } from '../../media-app/outreg/exchange';
import { parseCredentials } from '../../media-app/kit/sip-digest';
import { registrarHost } from '../../media-app/outreg';

const res = (h: Record<string, string>) => ({ get: (n: string) => h[n] });

describe('outbound registration: pure parts', () => {
  it('moves only along the state table', () => {
    expect(nextState('unregistered', 'attempt')).to.equal('registering');
    expect(nextState('registering', 'ok')).to.equal('registered');
    expect(nextState('registered', 'attempt')).to.equal('registered');
    expect(nextState('registered', 'fail')).to.equal('failed');
    expect(nextState('failed', 'attempt')).to.equal('registering');
    for (const s of ['unregistered', 'registering', 'registered', 'failed'] as const) expect(nextState(s, 'stop')).to.equal('unregistered');
    expect(() => nextState('unregistered', 'ok')).to.throw(/not allowed/);
    expect(() => nextState('failed', 'ok')).to.throw(/not allowed/);
    expect(() => nextState('registering', 'attempt')).to.throw(/not allowed/);
  });

  it('refreshes at 50-80 % of the grant, retries with capped exponential backoff', () => {
    expect(refreshDelayMs(10, () => 0)).to.equal(5000);
    expect(refreshDelayMs(10, () => 1)).to.equal(8000);
    expect(refreshDelayMs(1, () => 0)).to.equal(1000);
    const t = { retryMinMs: 1000, retryMaxMs: 60_000 };
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, t, () => 0.5))).to.deep.equal([1000, 2000, 4000, 8000]);
    expect(retryDelayMs(40, t, () => 1)).to.equal(60_000);
    for (let n = 1; n < 50; n++) expect(retryDelayMs(n, t, Math.random)).to.be.within(800, 60_000);
  });

  it("reads the granted expiry: our contact's expires, else Expires, else what was asked", () => {
    const u = 'reg-0123456789abcdef0123456789abcdef';
    expect(grantedExpiry(res({ Contact: `<sip:other@1.2.3.4>;expires=99, <sip:${u}@127.0.0.1:5060>;expires=10`, Expires: '3600' }), u, 3600)).to.equal(10);
    expect(grantedExpiry(res({ Contact: `"a, b" <sip:${u}@127.0.0.1;x=1>;q=1;expires=25` }), u, 3600)).to.equal(25);
    expect(grantedExpiry(res({ Expires: '120' }), u, 3600)).to.equal(120);
    expect(grantedExpiry(res({}), u, 600)).to.equal(600);
  });

  it('answers MD5 and SHA-256 challenges (the first usable one) with a response the registrar can verify', () => {
    const t = { uri: 'sip:carrier.test', username: 'acct', password: 'pw"x' };
    for (const alg of ['MD5', 'SHA-256'] as const) {
      const h = answerChallenge(
        `Digest realm="carrier.test", nonce="abc", algorithm=SHA-512-256, qop="auth" , Digest realm="carrier.test", nonce="n1", algorithm=${alg}, qop="auth,auth-int", opaque="o"`,
        t,
        'REGISTER',
      )!;
      const c = parseCredentials(h)!;
      expect(c).to.include({ username: 'acct', realm: 'carrier.test', nonce: 'n1', uri: 'sip:carrier.test', algorithm: alg, qop: 'auth', nc: '00000001', opaque: 'o' });
      const hash = (s: string) =>
        createHash(alg === 'MD5' ? 'md5' : 'sha256')
          .update(s)
          .digest('hex');
      const expected = hash(`${hash('acct:carrier.test:pw"x')}:n1:00000001:${c.cnonce}:auth:${hash('REGISTER:sip:carrier.test')}`);
      expect(c.response).to.equal(expected);
    }
    expect(answerChallenge('Basic realm="x"', t, 'REGISTER')).to.equal(null);
    expect(answerChallenge(undefined, t, 'REGISTER')).to.equal(null);
  });

  it("takes the registrar's host from host, host:port and [v6]:port", () => {
    expect(registrarHost('sip.carrier.test:5080')).to.equal('sip.carrier.test');
    expect(registrarHost('[::1]:5060')).to.equal('[::1]');
    expect(registrarHost('10.0.0.1')).to.equal('10.0.0.1');
  });
});
