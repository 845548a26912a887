// One message-waiting NOTIFY per change for a phone, however it is configured: an extension with
// unsolicited MWI (`mwi_unsolicited`) whose phone also SUBSCRIBEs to its own message-summary is
// served by the subscription only (the unsolicited NOTIFY skips that contact); another phone of the
// extension that does not subscribe keeps getting the unsolicited one; once the subscription ends,
// the unsolicited NOTIFY comes back. Two media-app nodes share Redis, so the node that claims a
// notice (and sends the unsolicited NOTIFY) may not be the one holding the subscription.
// The phones are raw UDP SIP endpoints (testkit/pbx/subscriber.ts) that REGISTER with digest and
// SUBSCRIBE, counting every message-summary NOTIFY that reaches their socket, in dialog or not.
import { expect } from 'chai';
import { testDb } from '../../testkit/db';
import { sleep, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { extensionWithBox, pbxCustomer } from '../../testkit/pbx/voicemail';
import { Subscriber, type SipMessage } from '../../testkit/pbx/subscriber';
import { newId } from '../../core/ids';
import { publishMwiChange } from '../../core/voicemail/mwi';

describe('voicemail: one MWI NOTIFY per change for a phone with unsolicited MWI that also subscribes', function () {
  this.timeout(120_000);
  let a: Platform;
  let b: Platform;
  const phones: Subscriber[] = [];

  before(async () => {
    a = await startPlatform();
    b = await startPlatform({ REDIS_KEY_PREFIX: a.config.redisKeyPrefix });
  });
  after(async () => {
    for (const s of phones) s.close();
    await b?.close();
    await a?.close();
  });

  const mwiNotifies = (s: Subscriber): SipMessage[] => s.notifies.filter((n) => (n.get('event') ?? '').toLowerCase().startsWith('message-summary'));
  const phone = async (p: Platform) => {
    const s = await Subscriber.open(p.sipPort);
    phones.push(s);
    return s;
  };

  it('the subscribed phone gets the subscription NOTIFY only; an unsubscribed phone of the extension the unsolicited one', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { ext, domain, password, box } = await extensionWithBox(cid, { number: `6${process.pid % 1000}1`, pin: '2468' });
    expect(ext.mwi_unsolicited).to.equal(true);
    const subscribed = await phone(b);
    const plain = await phone(a);
    for (const s of [subscribed, plain]) expect((await s.register({ user: ext.username, domain, password, expires: 600 })).status).to.equal(200);
    const sub = await subscribed.subscribe({ user: ext.username, domain, password, resource: ext.extension, event: 'message-summary', expires: 600 });
    expect(sub.response.status).to.be.oneOf([200, 202]);
    await sub.waitFor((n) => n.body.startsWith('Messages-Waiting: no'), 5000);

    // three changes: each node claims some notices (the claim is a race between the two nodes)
    const prefix = a.config.redisKeyPrefix;
    for (let i = 1; i <= 3; i++) {
      await db('voicemail_messages').insert({
        id: newId(),
        customer_id: cid,
        box_id: box.id,
        folder: 'new',
        caller_number: `+1555000100${i}`,
        filename: `vm-${i}.wav`,
        duration_ms: 1000,
        tm_create: new Date(),
      });
      expect(await publishMwiChange(db, a.redis, prefix, box)).to.not.equal(null);
      const body = `Voice-Message: ${i}/0 (0/0)`;
      await sub.waitFor((n) => n.body.includes(body), 5000);
      await until(() => mwiNotifies(plain).find((n) => n.body.includes(body)), 5000, `the unsubscribed phone's unsolicited NOTIFY ${i}`);
    }
    await sleep(1500); // a duplicate would come within this
    const got = mwiNotifies(subscribed);
    expect(
      got.map((n) => `${n.get('call-id') === sub.callId ? 'subscription' : 'unsolicited'} ${/Voice-Message: [^\r]*/.exec(n.body)?.[0]}`),
      'message-summary NOTIFYs at the subscribed phone',
    ).to.deep.equal(['subscription Voice-Message: 0/0 (0/0)', 'subscription Voice-Message: 1/0 (0/0)', 'subscription Voice-Message: 2/0 (0/0)', 'subscription Voice-Message: 3/0 (0/0)']);
    const plainGot = mwiNotifies(plain);
    expect(
      plainGot.map((n) => /Voice-Message: [^\r]*/.exec(n.body)?.[0]),
      'the unsubscribed phone: one unsolicited NOTIFY per change',
    ).to.deep.equal(['Voice-Message: 1/0 (0/0)', 'Voice-Message: 2/0 (0/0)', 'Voice-Message: 3/0 (0/0)']);
    expect(plainGot.every((n) => n.get('subscription-state') === 'active')).to.equal(true);

    // the subscription ends: the next change reaches that phone unsolicited again, once
    expect((await sub.refresh(0)).status).to.be.oneOf([200, 202]);
    await sub.waitFor((n) => (n.get('subscription-state') ?? '').startsWith('terminated'), 5000);
    const before = mwiNotifies(subscribed).length;
    await db('voicemail_messages').where({ box_id: box.id }).update({ folder: 'old' });
    expect(await publishMwiChange(db, a.redis, prefix, box)).to.not.equal(null);
    await until(
      () =>
        mwiNotifies(subscribed)
          .slice(before)
          .find((n) => n.body.includes('Voice-Message: 0/3 (0/0)')),
      5000,
      'the unsolicited NOTIFY after the subscription ended',
    );
    await sleep(1500);
    const after = mwiNotifies(subscribed).slice(before);
    expect(after.map((n) => n.get('call-id') === sub.callId)).to.deep.equal([false]);
  });
});
