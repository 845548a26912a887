// Flood protection that does not punish a whole NAT: two phones behind one address (127.0.0.3,
// different ports); one device floods and is banned, the others behind the address are still
// served; when many devices there flood and the address is banned, the registered phone (its
// address:port learned from the registrar's 2xx) keeps registering and receiving calls. A flood from many ports of one address still bans the address; a stranger flooding from
// one port is banned within 2 s. Real UDP on loopback, sipp phones, bounded counts and times.
import { expect } from 'chai';
import { truncateAll } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { createExtension, killAllSipp, registerOnly, sipp, sleep, startPlatform, type Platform } from '../../testkit/media-app/harness';
import { extensionCall } from '../../testkit/media-app/phones';
import { bansSoFar, options, Peers, type Peer } from '../../testkit/reliability/sip/peer';

describe('security: flood protection that does not punish a whole NAT', function () {
  this.timeout(90_000);
  let p: Platform;
  const peers = new Peers(() => p.sipPort);
  const peer = (host: string): Promise<Peer> => peers.open(host);
  /** OPTIONS from `from` answered within `ms`? */
  const answered = async (from: Peer, ms = 1200): Promise<boolean> => (await from.request(options(from, p.sipPort), ms)) !== null;
  /**
   * `perTick` OPTIONS from each flooder every 10 ms (100 ticks a second) for at most `seconds` (or
   * until the first ban with `stopOnBan`); resolves with the ms from the start to the first ban, or null.
   */
  async function flood(flooders: Peer[], perTick: number, seconds: number, stopOnBan = false): Promise<number | null> {
    const before = await bansSoFar();
    const start = Date.now();
    let bannedAt: number | null = null;
    for (let i = 0; i < seconds * 100; i++) {
      for (const f of flooders) for (let j = 0; j < perTick; j++) void f.send(options(f, p.sipPort));
      await sleep(10);
      if (i % 5 === 4 && bannedAt === null && (await bansSoFar()) > before) {
        bannedAt = Date.now() - start;
        if (stopOnBan) break;
      }
    }
    return bannedAt;
  }

  /**
   * Floods from `flooders` (400 OPTIONS/s each) until a fresh port of `host` is no longer answered: the
   * address's limit is passed within one 1.5 s round on a quiet machine; on a loaded one the senders'
   * 10 ms ticks stretch, so the flood goes on, at most 4 rounds. True when the address got banned.
   */
  async function floodUntilAddressBanned(flooders: Peer[], host: string): Promise<boolean> {
    for (let round = 0; round < 4; round++) {
      await flood(flooders, 4, 1.5);
      await sleep(100);
      if (!(await answered(await peer(host)))) return true;
    }
    return false;
  }

  before(async () => {
    await truncateAll();
    // sip-server as the harness starts it: default flood limits (100/s per port, burst 200, ban after
    // 200 refusals in a second), 127.0.0.1 allow-listed, so every source below is a 127.0.0.x other than it
    p = await startPlatform({ SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' });
  });
  after(async () => {
    killAllSipp();
    peers.close();
    await p?.close();
  });

  it('one device behind 127.0.0.3 floods, then many: the registered phone behind it keeps registering and receiving calls', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const server = `127.0.0.1:${p.sipPort}`;
    const phonePort = await freePort();
    const reg = (): Promise<{ code: number | null; errors: string }> =>
      sipp(registerOnly(b.ext.username, b.domain), [server, '-i', '127.0.0.3', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password, '-timeout', '8s']).done;
    const first = await reg();
    expect(first.code, first.errors).to.equal(0);

    const flooder = await peer('127.0.0.3');
    const bannedAt = await flood([flooder], 10, 1.5); // 1,000 OPTIONS/s for 1.5 s
    expect(bannedAt, 'the flooding device is banned').to.not.equal(null);
    expect(await answered(flooder), 'nothing from the flooding port is answered').to.equal(false);
    // another device behind the same address that did not flood is served
    expect(await answered(await peer('127.0.0.3')), 'a fresh port of the NAT address').to.equal(true);

    // now many devices behind the NAT flood: the address is banned, except for the registered phone
    const many = await Promise.all([1, 2, 3, 4, 5].map(() => peer('127.0.0.3')));
    expect(await floodUntilAddressBanned(many, '127.0.0.3'), 'a fresh port of the banned NAT address is not answered').to.equal(true);

    const again = await reg();
    expect(again.code, `the registered phone re-registers from the banned NAT address: ${again.errors}`).to.equal(0);
    const [rc, re] = await extensionCall(a, b, server, p.sipPort, phonePort, { phoneIp: '127.0.0.3' });
    expect(rc.code, 'caller ' + rc.errors).to.equal(0);
    expect(re.code, 'the phone behind the NAT receives the call ' + re.errors).to.equal(0);
  });

  it('a flood from many ports of one address gets the address banned', async () => {
    const flooders = await Promise.all([1, 2, 3, 4, 5].map(() => peer('127.0.0.9')));
    expect(await floodUntilAddressBanned(flooders, '127.0.0.9'), 'a fresh port of the flooding address is not answered').to.equal(true);
    expect(await answered(await peer('127.0.0.10')), 'another address').to.equal(true);
  });

  it('a stranger flooding from one port is banned within 2 s', async () => {
    const stranger = await peer('127.0.0.11');
    const bannedAt = await flood([stranger], 10, 2.5, true);
    expect(bannedAt, 'banned').to.not.equal(null);
    expect(bannedAt!).to.be.below(2000);
    await sleep(100);
    expect(await answered(stranger), 'the banned port').to.equal(false);
    expect(await answered(await peer('127.0.0.12')), 'another address').to.equal(true);
  });
});
