/**
 * Review: the per-source counters of the REGISTER/INVITE digest lockout and of the login throttle
 * were keyed on the exact client address. One IPv6 host usually holds a whole /64 and can use a new
 * address for every guess, so the per-source tier never triggered (only the per-AOR / per-account
 * ceilings, 10x looser, were left). An IPv6 source now counts by its /64; IPv4 and IPv4-mapped
 * addresses count as they are. Real Redis on loopback; the addresses are only strings here.
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { newId } from '../../core/ids';
import { Lockout } from '../../media-app/registrar/lockout';
import { createLoginThrottle } from '../../control-api/auth/login-throttle';

describe('security review: an IPv6 source counts by its /64', () => {
  let redis: Redis;
  const udp = (address: string) => ({ address, port: 5060, protocol: 'udp' });
  const prefix = `test-review-v6-${newId()}:`;
  before(() => (redis = new Redis(process.env.TEST_REDIS_URL!)));
  after(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('REGISTER lockout: 5 failures from 5 addresses of one /64 lock the whole /64 for that AOR, not the next /64', async () => {
    const l = new Lockout(redis, prefix, { failures: 5, windowSec: 60, lockSec: 300, aorFailures: 50, aorWindowSec: 600 });
    const aor = `alice-${newId()}@d.example`;
    for (let i = 1; i <= 5; i++) await l.fail(aor, udp(`2001:db8:1:2::${i.toString(16)}`));
    expect(await l.lockedFor(aor, udp('2001:db8:1:2:ffff::99'))).to.be.greaterThan(0);
    expect(await l.lockedFor(aor, udp('2001:db8:1:3::1'))).to.equal(0);
    expect(await l.lockedFor(aor, udp('192.0.2.1'))).to.equal(0);
  });

  it('IPv4 sources stay per address', async () => {
    const l = new Lockout(redis, prefix, { failures: 5, windowSec: 60, lockSec: 300, aorFailures: 50, aorWindowSec: 600 });
    const aor = `bob-${newId()}@d.example`;
    for (let i = 1; i <= 5; i++) await l.fail(aor, udp(`192.0.2.${i}`));
    expect(await l.lockedFor(aor, udp('192.0.2.6'))).to.equal(0);
  });

  it('login throttle: the 6th attempt from a sixth address of the same /64 waits', async () => {
    const t = createLoginThrottle(redis, prefix);
    const user = `carol-${newId()}@example.test`;
    for (let i = 1; i <= 5; i++) expect(await t.attempt(user, `2001:db8:5:6::${i}`)).to.equal(null);
    const sixth = await t.attempt(user, '2001:db8:5:6:abcd::1');
    expect(sixth, 'throttled').to.not.equal(null);
    expect(await t.attempt(user, '2001:db8:5:7::1')).to.equal(null);
  });
});
