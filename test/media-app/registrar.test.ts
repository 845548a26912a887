// Registrar end to end: sipp and a raw UDP client REGISTER through sip-server to media-app.
import { usePlatform } from '../../testkit/media-app/platform-hooks';
import { expect } from 'chai';
import { parseDigest } from '../../media-app/kit/sip-digest';
import { createExtension, sipp, UdpSip, type Platform } from '../../testkit/media-app/harness';
import { authorization, rawRegister as raw } from './digest-client';

function registerXml(user: string, domain: string, expires = 3600, finalStatus = 200): string {
  const req = (cseq: number, auth: boolean) => `<send retrans="500"><![CDATA[
REGISTER sip:${domain} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:${user}@${domain}>;tag=[call_number]
To: <sip:${user}@${domain}>
Call-ID: [call_id]
CSeq: ${cseq} REGISTER
Contact: <sip:${user}@[local_ip]:[local_port]>
Expires: ${expires}
Max-Forwards: 70
${auth ? '[authentication]\n' : ''}Content-Length: 0

]]></send>`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="register">
${req(1, false)}
<recv response="401" auth="true"/>
${req(2, true)}
<recv response="${finalStatus}"/>
</scenario>`;
}

describe('media-app registrar', function () {
  this.timeout(60_000);
  let p: Platform;
  let u: UdpSip;

  // sipp 3.6 answers the first challenge and knows only MD5
  usePlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', REGISTRAR_LOCKOUT_FAILURES: '3', SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' }, (x) => (p = x));
  beforeEach(async () => {
    u = await UdpSip.open();
  });
  afterEach(() => u.close());

  it('sipp registers with digest (MD5) and the binding lands in Redis with its expiry', async () => {
    const { ext, domain, password } = await createExtension();
    const r = await sipp(registerXml(ext.username, domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', ext.username, '-ap', password]).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const bindings = await p.app.registrar.bindings.get(`${ext.username}@${domain}`);
    expect(bindings).to.have.length(1);
    expect(bindings[0]!.contact).to.match(new RegExp(`^sip:${ext.username}@127\\.0\\.0\\.1:\\d+$`));
    expect(bindings[0]!.expiresAt - Date.now()).to.be.within(3500_000, 3601_000);
    const ttl = await p.redis.pttl(`${p.config.redisKeyPrefix}reg:${ext.username}@${domain}`);
    expect(ttl).to.be.greaterThan(3500_000);
  });

  it('offers MD5 and SHA-256 challenges on two header lines, and accepts SHA-256 (RFC 8760)', async () => {
    const { ext, domain, password } = await createExtension();
    const first = await u.request(raw(u, ext.username, domain), p.sipPort);
    expect(first.status).to.equal(401);
    const chals = first.headers.filter(([k]) => k === 'www-authenticate').map(([, v]) => v);
    expect(chals).to.have.length(2);
    expect(chals.map((c) => parseDigest(c)!.algorithm)).to.deep.equal(['MD5', 'SHA-256']);
    for (const c of chals) expect(parseDigest(c)!.realm).to.equal(domain);
    const sha = chals[1]!;
    const ok = await u.request(raw(u, ext.username, domain, authorization(sha, ext.username, password, `sip:${domain}`)), p.sipPort);
    expect(ok.status).to.equal(200);
    expect(ok.headers.find(([k]) => k === 'contact')![1]).to.match(/expires=(3600|3599)/);
  });

  it('un-REGISTER (Expires: 0) removes the binding', async () => {
    const { ext, domain, password } = await createExtension();
    const aor = `${ext.username}@${domain}`;
    const c1 = await u.request(raw(u, ext.username, domain), p.sipPort);
    const md5 = c1.headers
      .filter(([k]) => k === 'www-authenticate')
      .map(([, v]) => v)
      .find((v) => /MD5/.test(v))!;
    expect((await u.request(raw(u, ext.username, domain, authorization(md5, ext.username, password, `sip:${domain}`)), p.sipPort)).status).to.equal(200);
    expect(await p.app.registrar.bindings.get(aor)).to.have.length(1);
    // the same answer again is a replay (its nonce count is used up): a new challenge, stale=true
    const replayed = await u.request(raw(u, ext.username, domain, authorization(md5, ext.username, password, `sip:${domain}`), 0), p.sipPort);
    expect(replayed.status).to.equal(401);
    const fresh = replayed.headers
      .filter(([k]) => k === 'www-authenticate')
      .map(([, v]) => v)
      .find((v) => /MD5/.test(v))!;
    expect(parseDigest(fresh)).to.include({ stale: 'true' });
    expect(await p.app.registrar.bindings.get(aor)).to.have.length(1);
    const un = await u.request(raw(u, ext.username, domain, authorization(fresh, ext.username, password, `sip:${domain}`), 0), p.sipPort);
    expect(un.status).to.equal(200);
    expect(await p.app.registrar.bindings.get(aor)).to.have.length(0);
  });

  it('answers an unknown extension exactly like a wrong password', async () => {
    const { ext, domain, password } = await createExtension();
    const answers: string[] = [];
    for (const [user, pw] of [
      [ext.username, password + 'bad'],
      ['nobody', password],
    ] as const) {
      const c = await u.request(raw(u, user, domain), p.sipPort);
      const chal = c.headers.filter(([k]) => k === 'www-authenticate').map(([, v]) => v.replace(/nonce="[^"]*"/, 'nonce=""'));
      const r = await u.request(raw(u, user, domain, authorization(c.headers.find(([k]) => k === 'www-authenticate')![1], user, pw, `sip:${domain}`)), p.sipPort);
      answers.push(JSON.stringify([c.status, chal, r.status, r.raw.split('\r\n')[0]]));
    }
    expect(answers[0]).to.equal(answers[1]);
    expect(JSON.parse(answers[0]!)[2]).to.equal(403);
    // an unknown registration domain is challenged the same way
    const other = await u.request(raw(u, 'x', 'zzzz.reg.sip.test'), p.sipPort);
    expect(other.status).to.equal(401);
  });

  it('locks the address-of-record after repeated failures, even for the right password; sipp with a bad password fails', async () => {
    const { ext, domain, password } = await createExtension();
    const bad = await sipp(registerXml(ext.username, domain, 3600, 403), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', ext.username, '-ap', 'wrong-password']).done;
    expect(bad.code, bad.errors).to.equal(0);
    for (let i = 0; i < 2; i++) {
      const c = await u.request(raw(u, ext.username, domain), p.sipPort);
      const r = await u.request(raw(u, ext.username, domain, authorization(c.headers.find(([k]) => k === 'www-authenticate')![1], ext.username, password, `sip:${domain}`, true)), p.sipPort);
      expect(r.status).to.equal(403);
    }
    // locked: no challenge any more, and the right password is refused too
    const locked = await u.request(raw(u, ext.username, domain), p.sipPort);
    expect(locked.status).to.equal(403);
    const good = await sipp(registerXml(ext.username, domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', ext.username, '-ap', password], { killAfterMs: 8000 }).done;
    expect(good.code).to.not.equal(0);
    expect(await p.app.registrar.bindings.get(`${ext.username}@${domain}`)).to.have.length(0);
  });

  it('refuses a too-short expiry with 423 and Min-Expires', async () => {
    const { ext, domain, password } = await createExtension();
    const c = await u.request(raw(u, ext.username, domain), p.sipPort);
    const md5 = c.headers
      .filter(([k]) => k === 'www-authenticate')
      .map(([, v]) => v)
      .find((v) => /MD5/.test(v))!;
    const r = await u.request(raw(u, ext.username, domain, authorization(md5, ext.username, password, `sip:${domain}`), 10), p.sipPort);
    expect(r.status).to.equal(423);
    expect(r.headers.find(([k]) => k === 'min-expires')![1]).to.equal('60');
  });
});
