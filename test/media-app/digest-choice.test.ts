// Which digest challenges a default install offers, and the per-extension override.
// sipp 3.6 and older desk phones answer the FIRST WWW-Authenticate/Proxy-Authenticate header and fail
// when it is not MD5; libre (baresip 1.0, test/edge/baresip.test.ts) fails when ANY line is not MD5. The SHA-256 client is
// a raw UDP client that looks for a SHA-256 challenge and refuses to fall back to MD5.
import { usePlatform } from '../../testkit/media-app/platform-hooks';
import { expect } from 'chai';
import { parseDigest } from '../../media-app/kit/sip-digest';
import { testDb } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { createExtension, registerOnly, sipp, UdpSip, type Platform } from '../../testkit/media-app/harness';
import { extensionCall } from '../../testkit/media-app/phones';
import { authorization, challengesOf, rawRegister } from './digest-client';

const algorithmsOf = (chals: string[]) => chals.map((c) => parseDigest(c)!.algorithm);

/** The SHA-256 client: REGISTER, pick the SHA-256 challenge (none: fail), answer it. */
async function sha256Register(p: Platform, u: UdpSip, user: string, domain: string, password: string): Promise<number> {
  const first = await u.request(rawRegister(u, user, domain), p.sipPort);
  expect(first.status).to.equal(401);
  const sha = challengesOf(first).find((c) => parseDigest(c)!.algorithm === 'SHA-256');
  if (!sha) throw new Error('no SHA-256 challenge');
  return (await u.request(rawRegister(u, user, domain, authorization(sha, user, password, `sip:${domain}`)), p.sipPort)).status;
}

describe('media-app digest challenge choice', function () {
  this.timeout(90_000);
  let p: Platform;
  let u: UdpSip;

  // the defaults of an install: no SIP_DIGEST_ALGORITHMS
  usePlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }, (x) => (p = x));
  beforeEach(async () => {
    u = await UdpSip.open();
  });
  afterEach(() => u.close());

  it('by default an MD5-only client (first challenge only) registers and calls another extension (401 and 407)', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const sipServer = `127.0.0.1:${p.sipPort}`;
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(b.ext.username, b.domain), [sipServer, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect(reg.code, reg.errors + reg.messages).to.equal(0);
    const [rc, re] = await extensionCall(a, b, sipServer, p.sipPort, phonePort);
    expect(rc.code, 'caller ' + rc.errors + rc.messages).to.equal(0);
    expect(re.code, 'callee ' + re.errors + re.messages).to.equal(0);
  });

  it('by default the challenge is MD5 alone (libre gives up on any line that is not MD5); an extension set to MD5 then SHA-256 lets a SHA-256 client register', async () => {
    const { ext, domain, password } = await createExtension();
    const first = await u.request(rawRegister(u, ext.username, domain), p.sipPort);
    expect(algorithmsOf(challengesOf(first))).to.deep.equal(['MD5']);
    await (
      await testDb()
    )('extensions')
      .where({ id: ext.id })
      .update({ digest_algorithms: ['MD5', 'SHA-256'] });
    expect(await sha256Register(p, u, ext.username, domain, password)).to.equal(200);
  });

  it('an extension set to SHA-256 only is challenged with SHA-256 alone and refuses MD5 answers', async () => {
    const { ext, domain, password } = await createExtension();
    await (
      await testDb()
    )('extensions')
      .where({ id: ext.id })
      .update({ digest_algorithms: ['SHA-256'] });
    const first = await u.request(rawRegister(u, ext.username, domain), p.sipPort);
    expect(algorithmsOf(challengesOf(first))).to.deep.equal(['SHA-256']);
    // an MD5 answer computed on that nonce (the right password) is refused
    const md5Chal = challengesOf(first)[0]!.replace('algorithm=SHA-256', 'algorithm=MD5');
    const md5 = await u.request(rawRegister(u, ext.username, domain, authorization(md5Chal, ext.username, password, `sip:${domain}`)), p.sipPort);
    expect(md5.status).to.equal(403);
    expect(await sha256Register(p, u, ext.username, domain, password)).to.equal(200);
    // sipp (MD5 only) cannot register
    const r = await sipp(registerOnly(ext.username, domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', ext.username, '-ap', password], { killAfterMs: 8000 }).done;
    expect(r.code).to.not.equal(0);
  });

  it('an extension set to SHA-256 then MD5 gets that order', async () => {
    const { ext, domain } = await createExtension();
    await (
      await testDb()
    )('extensions')
      .where({ id: ext.id })
      .update({ digest_algorithms: ['SHA-256', 'MD5'] });
    const first = await u.request(rawRegister(u, ext.username, domain), p.sipPort);
    expect(algorithmsOf(challengesOf(first))).to.deep.equal(['SHA-256', 'MD5']);
  });
});
