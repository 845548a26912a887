// Issue 32, item 12: the digest lockout must not let a neighbour lock the owner's phone out. A
// device (address and port) that authenticated keeps working while another port at the same
// address guesses (sipp as the owner's phone, raw UDP peers as the guessers); answers to a made-up
// nonce, or to one issued to another address, count nothing; a guesser rotating ports still hits
// the cap per address and AOR. Lockout's own device bookkeeping against the real Redis at the end.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { digestResponse } from '../../media-app/kit/sip-digest';
import { Lockout } from '../../media-app/registrar/lockout';
import { truncateAll } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { createExtension, killAllSipp, registerOnly, sipp, startPlatform, type Platform } from '../../testkit/media-app/harness';
import { lockedOutByWrongRegisters, digestAttempt, header, Peers, registerAttempt, type Peer } from '../../testkit/reliability/sip/peer';

const LOCK_AFTER = 5;
const LOCK_SEC = 30;

describe("security: a neighbour cannot lock the owner's phone out", function () {
  this.timeout(90_000);
  let p: Platform;
  const peers = new Peers(() => p.sipPort);
  const peer = (host: string): Promise<Peer> => peers.open(host);
  /** The owner's phone: sipp registering from `port` at 127.0.0.1; true on 200. */
  const phoneRegisters = async (user: string, domain: string, password: string, port: number): Promise<boolean> => {
    const r = await sipp(registerOnly(user, domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-au', user, '-ap', password, '-timeout', '8s']).done;
    return r.code === 0;
  };
  /** A REGISTER answering a nonce of the attacker's choosing with a wrong password. */
  const withNonce = (g: Peer, user: string, domain: string, nonce: string, i: number) => {
    const c = { username: user, realm: domain, nonce, uri: `sip:${domain}`, algorithm: 'MD5' as const, qop: 'auth', nc: '00000001', cnonce: `c${i}` };
    const auth = `Digest username="${user}", realm="${domain}", nonce="${nonce}", uri="${c.uri}", response="${digestResponse(c, 'REGISTER', `wrong-${i}`)}", algorithm=MD5, qop=auth, nc=00000001, cnonce="${c.cnonce}"`;
    return digestAttempt(g, { method: 'REGISTER', user, domain, password: '', replay: auth });
  };

  before(async () => {
    await truncateAll();
    p = await startPlatform({
      SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256',
      REGISTRAR_LOCKOUT_FAILURES: String(LOCK_AFTER),
      REGISTRAR_LOCKOUT_WINDOW_SEC: '60',
      REGISTRAR_LOCKOUT_SEC: String(LOCK_SEC),
      REGISTRAR_LOCKOUT_AOR_FAILURES: '100',
      REGISTRAR_LOCKOUT_AOR_WINDOW_SEC: '600',
    });
  });
  after(async () => {
    killAllSipp();
    peers.close();
    await p?.close();
  });

  it("the owner's phone stays registered while another port on 127.0.0.1 sends 20 wrong passwords; that address stays locked", async () => {
    const owner = await createExtension();
    const user = owner.ext.username;
    const phonePort = await freePort();
    expect(await phoneRegisters(user, owner.domain, owner.password, phonePort), 'the owner registers').to.equal(true);
    const neighbour = await peer('127.0.0.1');
    await lockedOutByWrongRegisters(neighbour, p.sipPort, user, owner.domain, 20, LOCK_AFTER, LOCK_SEC);
    // the owner's phone, same address, its own port: re-registers
    expect(await phoneRegisters(user, owner.domain, owner.password, phonePort), 'the owner re-registers from its port').to.equal(true);
    expect(await p.app.registrar.bindings.get(`${user}@${owner.domain}`)).to.have.length(1);
    // the guessing port, and any new port at that address, are locked even with the right password
    for (const g of [neighbour, await peer('127.0.0.1')]) {
      const locked = await registerAttempt(g, p.sipPort, user, owner.domain, owner.password);
      expect(locked.final?.status).to.equal(403);
      expect(Number(header(locked.final!, 'retry-after'))).to.be.within(1, LOCK_SEC);
    }
  });

  it('answers to made-up nonces and to nonces issued to another address count nothing: a fresh challenge each', async () => {
    const ext = await createExtension();
    const user = ext.ext.username;
    const g = await peer('127.0.0.81');
    const elsewhere = await registerAttempt(await peer('127.0.0.82'), p.sipPort, user, ext.domain, 'wrong');
    const theirs = /nonce="([^"]+)"/.exec(header(elsewhere.challenge!, 'www-authenticate') ?? '')![1]!;
    const madeUp = ['0', 'lzz0k1.AAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA', `${theirs.slice(0, -1)}${theirs.endsWith('A') ? 'B' : 'A'}`];
    for (let i = 0; i < 4 * LOCK_AFTER; i++) {
      const nonce = i % 2 ? theirs : madeUp[i % madeUp.length]!;
      const r = await withNonce(g, user, ext.domain, nonce, i);
      expect(r.final?.status, `${nonce}: ${r.final?.raw}`).to.equal(401);
      expect(header(r.final!, 'www-authenticate'))
        .to.match(/nonce="[^"]+"/)
        .and.not.include(nonce === '0' ? 'nonce="0"' : nonce);
    }
    expect((await registerAttempt(g, p.sipPort, user, ext.domain, ext.password)).final?.status, 'not locked').to.equal(200);
  });

  it('a guesser rotating ports at one address still gets no more than the cap per address and AOR', async () => {
    const ext = await createExtension();
    const user = ext.ext.username;
    const finals: (number | undefined)[] = [];
    for (let i = 0; i < LOCK_AFTER + 3; i++) {
      finals.push((await registerAttempt(await peer('127.0.0.91'), p.sipPort, user, ext.domain, `wrong-${i}`)).final?.status);
    }
    expect(finals).to.deep.equal(finals.map(() => 403));
    const right = await registerAttempt(await peer('127.0.0.91'), p.sipPort, user, ext.domain, ext.password);
    expect(right.final?.status, 'a fresh port with the right password').to.equal(403);
    expect(Number(header(right.final!, 'retry-after'))).to.be.within(1, LOCK_SEC);
  });

  it("Lockout: a trusted device is spared its address's lock until it fails itself", async () => {
    const redis = new Redis(process.env.TEST_REDIS_URL!);
    const prefix = `tln${process.pid}_${randomBytes(4).toString('hex')}:`;
    try {
      const l = new Lockout(redis, prefix, { failures: 3, windowSec: 60, lockSec: 300, aorFailures: 100, aorWindowSec: 600 });
      const aor = 'owner@d.example';
      const phone = { address: '192.0.2.1', port: 5062, protocol: 'udp' };
      await l.succeed(aor, phone);
      for (let i = 0; i < 3; i++) await l.fail(aor, { ...phone, port: 40_000 + i });
      expect(await l.lockedFor(aor, { ...phone, port: 40_000 }), 'the guessing ports').to.be.greaterThan(0);
      expect(await l.lockedFor(aor, { ...phone, port: 41_000 }), 'a new port').to.be.greaterThan(0);
      expect(await l.lockedFor(aor, { ...phone, protocol: 'tcp' }), 'another transport is another device').to.be.greaterThan(0);
      expect(await l.lockedFor(aor, phone), 'the device that authenticated').to.equal(0);
      expect(await l.fail(aor, phone)).to.be.within(299, 300);
      expect(await l.lockedFor(aor, phone), 'after its own failure').to.be.greaterThan(0);
    } finally {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });
});
