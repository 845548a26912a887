// A frozen, expired or deleted account's phones are refused once they authenticate: a REGISTER or
// refresh gets 403 with a Warning naming the account's state and its bindings go; an un-REGISTER is
// still accepted; an INVITE from one of its extensions gets 403. Refusals come only after the digest
// is right, so nothing tells a stranger the account's state.
import { expect } from 'chai';
import { testDb, truncateAll } from '../../testkit/db';
import { createExtension, SIP_DOMAIN, startPlatform, UdpSip, type Platform } from '../../testkit/media-app/harness';
import { loopbackTrunk } from '../../testkit/trunks';
import { trunksRepo } from '../../core/repos/trunks';
import { authorization, challengesOf, rawRegister as raw } from './digest-client';
import type { CustomerStatus } from '../../core/repos/customers';

describe('media-app registrar: the account status gate', function () {
  this.timeout(60_000);
  let p: Platform;
  let u: UdpSip;
  before(async () => {
    await truncateAll();
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_DIGEST_ALGORITHMS: 'MD5' });
  });
  after(async () => p?.close());
  beforeEach(async () => {
    u = await UdpSip.open();
  });
  afterEach(() => u.close());

  const setStatus = async (id: string, status: CustomerStatus) =>
    (await testDb())('customers')
      .where({ id })
      .update({ status, tm_deletion_scheduled: status === 'frozen' ? new Date() : null });

  async function register(user: string, domain: string, password: string, expires = 3600) {
    const c = await u.request(raw(u, user, domain, '', expires), p.sipPort);
    expect(c.status).to.equal(401);
    return u.request(raw(u, user, domain, authorization(challengesOf(c)[0]!, user, password, `sip:${domain}`), expires), p.sipPort);
  }

  for (const status of ['frozen', 'expired', 'deleted'] as const) {
    it(`a ${status} account's phone gets 403 on REGISTER, loses its binding, and may still un-REGISTER`, async () => {
      const { customerId, ext, domain, password } = await createExtension();
      const aor = `${ext.username}@${domain}`;
      expect((await register(ext.username, domain, password)).status).to.equal(200);
      expect(await p.app.registrar.bindings.get(aor)).to.have.length(1);
      await setStatus(customerId, status);
      const refused = await register(ext.username, domain, password);
      expect(refused.status).to.equal(403);
      expect(refused.headers.find(([k]) => k === 'warning')?.[1]).to.match(new RegExp(`^399 \\S+ "account ${status}"$`));
      expect(await p.app.registrar.bindings.get(aor)).to.have.length(0);
      expect((await register(ext.username, domain, password, 0)).status).to.equal(200);
      // a wrong password is still a plain 403 with no Warning: the state is told only to the owner
      const c = await u.request(raw(u, ext.username, domain), p.sipPort);
      const wrong = await u.request(raw(u, ext.username, domain, authorization(challengesOf(c)[0]!, ext.username, password + 'x', `sip:${domain}`)), p.sipPort);
      expect(wrong.status).to.equal(403);
      expect(wrong.headers.find(([k]) => k === 'warning')).to.equal(undefined);
    });
  }

  it("a frozen account's extension gets 403 on INVITE; an active one is let through the gate", async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const invite = (auth: string, n: number) =>
      [
        `INVITE sip:${b.ext.extension}@${a.domain} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${u.port};branch=z9hG4bK-inv${n}-${Date.now()}`,
        `From: <sip:${a.ext.username}@${a.domain}>;tag=inv${n}`,
        `To: <sip:${b.ext.extension}@${a.domain}>`,
        `Call-ID: inv-${u.port}-${n}@127.0.0.1`,
        `CSeq: ${n} INVITE`,
        `Contact: <sip:${a.ext.username}@127.0.0.1:${u.port}>`,
        'Max-Forwards: 70',
        ...(auth ? [auth] : []),
        'Content-Type: application/sdp',
        `Content-Length: ${SDP.length}`,
        '',
        SDP,
      ].join('\r\n');
    const attempt = async (n: number) => {
      const c = await u.request(invite('', n), p.sipPort);
      expect(c.status).to.equal(407);
      const chal = challengesOf(c, 'proxy-authenticate')[0]!;
      const auth = authorization(chal, a.ext.username, a.password, `sip:${b.ext.extension}@${a.domain}`, false, 'INVITE').replace(/^Authorization/, 'Proxy-Authorization');
      return u.request(invite(auth, n + 1), p.sipPort);
    };
    // active: past the gate (b is not registered: 480, not 403)
    expect((await attempt(1)).status).to.not.equal(403);
    await setStatus(a.customerId, 'frozen');
    const r = await attempt(3);
    expect(r.status).to.equal(403);
    expect(r.headers.find(([k]) => k === 'warning')?.[1]).to.match(/^399 \S+ "account frozen"$/);
  });

  // the trunk's lookup by address reads its account's standing in the same statement (inbound/source.ts)
  for (const status of ['frozen', 'deleted'] as const) {
    it(`a ${status} account's trunk gets 403 on INVITE, by its address and by its domain; an active one is let through the gate`, async () => {
      const { customerId } = await createExtension();
      const domain = `st${status}${Date.now()}`;
      const db = await testDb();
      const trunk = await loopbackTrunk(db, customerId, domain);
      const invite = (host: string, n: number) =>
        [
          `INVITE sip:+15550001111@${host} SIP/2.0`,
          `Via: SIP/2.0/UDP 127.0.0.1:${u.port};branch=z9hG4bK-tr${n}-${Date.now()}`,
          `From: <sip:+15557654321@127.0.0.1>;tag=tr${n}`,
          `To: <sip:+15550001111@${host}>`,
          `Call-ID: tr-${u.port}-${n}@127.0.0.1`,
          `CSeq: ${n} INVITE`,
          `Contact: <sip:+15557654321@127.0.0.1:${u.port}>`,
          'Max-Forwards: 70',
          'Content-Type: application/sdp',
          `Content-Length: ${SDP.length}`,
          '',
          SDP,
        ].join('\r\n');
      const hosts = ['127.0.0.1', `${domain}.trunk.${SIP_DOMAIN}`];
      try {
        // active: past the gate (no route to the number: not 403)
        for (const [i, host] of hosts.entries()) expect((await u.request(invite(host, i + 1), p.sipPort)).status).to.not.equal(403);
        await setStatus(customerId, status);
        for (const [i, host] of hosts.entries()) {
          const r = await u.request(invite(host, i + 3), p.sipPort);
          expect(r.status, host).to.equal(403);
          expect(r.headers.find(([k]) => k === 'warning')?.[1], host).to.match(new RegExp(`^399 \\S+ "account ${status}"$`));
        }
      } finally {
        // the next test's trunk claims the same address (two customers' claims: refused as ambiguous)
        await trunksRepo(db).softDelete(trunk.id);
      }
    });
  }
});

const SDP = ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40000 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');
