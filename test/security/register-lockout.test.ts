// Finding 8: the REGISTER lockout is keyed on the source address and the AOR, so a stranger who
// guesses wrong passwords for a victim's AOR locks only itself out. The victim's phone at another
// address keeps registering (sipp, real digest over UDP on loopback); unknown users and wrong
// passwords are answered identically, locks included; the per-AOR ceiling that stops a guesser
// spread over many addresses never applies to an address that has authenticated for that AOR.
import { expect } from 'chai';
import { truncateAll } from '../../testkit/db';
import { createExtension, killAllSipp, registerOnly, sipp, startPlatform, type Platform } from '../../testkit/media-app/harness';
import { lockedOutByWrongRegisters, digestAttempt, header, Peers, registerAttempt, shape, type Peer } from '../../testkit/reliability/sip/peer';

const LOCK_AFTER = 5;
const LOCK_SEC = 30;
const AOR_CEILING = 12;

describe('security: REGISTER lockout keyed on source address and AOR', function () {
  this.timeout(60_000);
  let p: Platform;
  const peers = new Peers(() => p.sipPort);
  const peer = (host: string): Promise<Peer> => peers.open(host);
  /** The victim's phone: sipp at 127.0.0.1 registering with its password; true on 200. */
  const phoneRegisters = async (user: string, domain: string, password: string, host = '127.0.0.1'): Promise<boolean> => {
    const r = await sipp(registerOnly(user, domain), [`127.0.0.1:${p.sipPort}`, '-i', host, '-m', '1', '-au', user, '-ap', password, '-timeout', '8s']).done;
    if (r.code !== 0 && process.env.DEBUG_SIPP) console.log(r.errors, r.messages, r.stderr);
    return r.code === 0;
  };

  before(async () => {
    await truncateAll();
    p = await startPlatform({
      SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256', // sipp answers the first challenge and knows MD5 only
      REGISTRAR_LOCKOUT_FAILURES: String(LOCK_AFTER),
      REGISTRAR_LOCKOUT_WINDOW_SEC: '60',
      REGISTRAR_LOCKOUT_SEC: String(LOCK_SEC),
      REGISTRAR_LOCKOUT_AOR_FAILURES: String(AOR_CEILING),
      REGISTRAR_LOCKOUT_AOR_WINDOW_SEC: '600',
    });
  });
  after(async () => {
    killAllSipp();
    peers.close();
    await p?.close();
  });

  it('15 wrong REGISTERs from a stranger lock the stranger, not the victim registering from elsewhere', async () => {
    const victim = await createExtension();
    const user = victim.ext.username;
    const stranger = await peer('127.0.0.2');
    await lockedOutByWrongRegisters(stranger, p.sipPort, user, victim.domain, 15, LOCK_AFTER, LOCK_SEC);

    expect(await phoneRegisters(user, victim.domain, victim.password), 'the victim registers from 127.0.0.1').to.equal(true);
    expect(await p.app.registrar.bindings.get(`${user}@${victim.domain}`)).to.have.length(1);
    // the stranger stays locked, even with the right password
    const locked = await registerAttempt(stranger, p.sipPort, user, victim.domain, victim.password);
    expect(locked.final?.status).to.equal(403);
    expect(Number(header(locked.final!, 'retry-after'))).to.be.within(1, LOCK_SEC);
    // and a third address is not affected by either
    const other = await peer('127.0.0.5');
    expect((await registerAttempt(other, p.sipPort, user, victim.domain, victim.password)).final?.status).to.equal(200);
  });

  it('INVITE digests share the lockout: wrong INVITEs from a stranger lock the stranger; the victim registers and calls from elsewhere', async () => {
    const victim = await createExtension();
    const callee = await createExtension(victim.customerId);
    const user = victim.ext.username;
    const stranger = await peer('127.0.0.13');
    const finals: (number | undefined)[] = [];
    for (let i = 0; i < LOCK_AFTER + 2; i++) {
      const a = await digestAttempt(stranger, { method: 'INVITE', user, domain: victim.domain, password: `wrong-${i}`, target: callee.ext.extension });
      finals.push(a.final?.status);
    }
    expect(finals).to.deep.equal(finals.map(() => 403));
    const locked = await digestAttempt(stranger, { method: 'INVITE', user, domain: victim.domain, password: victim.password, target: callee.ext.extension });
    expect(locked.final?.status, 'the stranger is locked, even with the right password').to.equal(403);
    expect(Number(header(locked.final!, 'retry-after'))).to.be.within(1, LOCK_SEC);
    expect(await phoneRegisters(user, victim.domain, victim.password), 'the victim registers from 127.0.0.1').to.equal(true);
    // the victim's own INVITE passes authentication (480: the callee is not registered; not 403)
    const own = await digestAttempt(await peer('127.0.0.14'), { method: 'INVITE', user, domain: victim.domain, password: victim.password, target: callee.ext.extension });
    expect(own.final?.status).to.equal(480);
  });

  it('an unknown user and a wrong password get identical answers, before and after the lock', async () => {
    const ext = await createExtension();
    const ghost = `ghost${Date.now()}`;
    const a = await peer('127.0.0.6');
    const b = await peer('127.0.0.7');
    for (let i = 0; i < LOCK_AFTER + 2; i++) {
      const known = await registerAttempt(a, p.sipPort, ext.ext.username, ext.domain, `wrong-${i}`);
      const unknown = await registerAttempt(b, p.sipPort, ghost, ext.domain, `wrong-${i}`);
      expect(shape(unknown.challenge), `attempt ${i}`).to.equal(shape(known.challenge));
      expect(shape(unknown.final), `attempt ${i}`).to.equal(shape(known.final));
      expect(known.final?.status).to.equal(403);
    }
  });

  it(`the per-AOR ceiling (${AOR_CEILING} failures from all addresses) refuses new addresses for a while, never one that authenticated before`, async () => {
    const owner = await createExtension();
    const user = owner.ext.username;
    expect(await phoneRegisters(user, owner.domain, owner.password, '127.0.0.8'), 'the owner registers first').to.equal(true);
    // a guesser spread over addresses, each under the per-address lock
    let n = 0;
    for (let h = 20; n < AOR_CEILING; h++) {
      const g = await peer(`127.0.0.${h}`);
      for (let i = 0; i < LOCK_AFTER - 1 && n < AOR_CEILING; i++, n++) {
        expect((await registerAttempt(g, p.sipPort, user, owner.domain, `wrong-${n}`)).final?.status).to.equal(403);
      }
    }
    // a new address is refused, even with the right password, for at most the lock time
    const newcomer = await peer('127.0.0.40');
    const refused = await registerAttempt(newcomer, p.sipPort, user, owner.domain, owner.password);
    expect(refused.final?.status).to.equal(403);
    expect(Number(header(refused.final!, 'retry-after'))).to.be.within(1, LOCK_SEC);
    // the owner's address, which authenticated for this AOR before, is not
    expect(await phoneRegisters(user, owner.domain, owner.password, '127.0.0.8'), 'the owner re-registers').to.equal(true);
  });
});
