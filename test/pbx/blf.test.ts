// Busy lamp (RFC 4235, Event: dialog) on the real call plane: sip-server + a media-app node on
// loopback, sipp phones making a real call between two extensions, and a raw UDP subscriber
// (testkit/pbx/subscriber.ts) whose NOTIFY bodies are parsed as XML.
import { expect } from 'chai';
import { XMLParser } from 'fast-xml-parser';
import { truncateAll } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { createExtension, killAllSipp, registerOnly, sipp, startPlatform, type Platform } from '../../testkit/media-app/harness';
import { callerPhone, callerArgs, answeringPhone } from '../../testkit/media-app/phones';
import { answeringUas } from '../../testkit/media-app/harness';
import { Subscriber, type SipMessage } from '../../testkit/pbx/subscriber';
import { Redis } from 'ioredis';
import { PresenceStore } from '../../core/presence/store';

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@' });

interface DialogXml {
  '@id': string;
  '@direction'?: string;
  state: string | { '#text': string };
  remote?: { identity: string | { '#text': string; '@display'?: string } };
}

/** The dialog-info document of a NOTIFY: its version, state attribute, entity and dialogs. */
function dialogInfo(n: SipMessage): { version: number; state: string; entity: string; dialogs: DialogXml[] } {
  expect(n.get('content-type')).to.equal('application/dialog-info+xml');
  const doc = xml.parse(n.body) as { 'dialog-info': { '@version': string; '@state': string; '@entity': string; dialog?: DialogXml | DialogXml[] } };
  const di = doc['dialog-info'];
  const dialogs = di.dialog === undefined ? [] : Array.isArray(di.dialog) ? di.dialog : [di.dialog];
  return { version: Number(di['@version']), state: di['@state'], entity: di['@entity'], dialogs };
}
const text = (v: string | { '#text': string }) => (typeof v === 'string' ? v : v['#text']);
const states = (n: SipMessage) => dialogInfo(n).dialogs.map((d) => text(d.state));

describe('BLF: SUBSCRIBE Event: dialog', function () {
  this.timeout(90_000);
  let p: Platform;
  let sub: Subscriber;

  before(async () => {
    await truncateAll();
    p = await startPlatform({ SUBSCRIBE_MIN_EXPIRES: '2', SUBSCRIBE_MAX_PER_EXTENSION: '3' });
    sub = await Subscriber.open(p.sipPort);
  });
  after(async () => {
    killAllSipp();
    sub?.close();
    await p?.close();
  });

  it('lights the key of a ringing, answered, then ended call: early, confirmed, terminated, versions counting up', async () => {
    const watcher = await createExtension();
    const caller = await createExtension(watcher.customerId);
    const callee = await createExtension(watcher.customerId);
    const s = await sub.subscribe({ user: watcher.ext.username, domain: watcher.domain, password: watcher.password, resource: callee.ext.extension, event: 'dialog', expires: 600 });
    expect(s.response.status).to.be.oneOf([200, 202]);
    expect(s.response.get('expires')).to.equal('600');
    const first = await s.waitFor();
    expect(first.get('event')).to.equal('dialog');
    // RFC 6665 8.2.1 (a NOTIFY is a target refresh request): it carries our Contact
    expect(first.get('contact')).to.match(/^<sip:[^>]+>/);
    expect(first.get('subscription-state')).to.match(/^active;expires=\d+/);
    const idle = dialogInfo(first);
    expect(idle).to.include({ version: 0, state: 'full' });
    expect(idle.entity).to.equal(`sip:${callee.ext.extension}@${callee.domain}`);
    expect(idle.dialogs).to.have.length(0);

    // a real call: the callee registers and answers 1.5 s after ringing, the caller hangs up 1.5 s later
    const sipServer = `127.0.0.1:${p.sipPort}`;
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(callee.ext.username, callee.domain), [sipServer, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', callee.ext.username, '-ap', callee.password])
      .done;
    expect(reg.code, reg.errors).to.equal(0);
    const answering = sipp(
      answeringUas({ tag: '[pid]callee', contact: `<sip:${callee.ext.username}@[local_ip]:[local_port]>`, inviteTimeoutMs: 20000, pauseMs: 1500 }),
      ['-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 40_000 },
    );
    await new Promise((r) => setTimeout(r, 300));
    const calling = sipp(
      callerPhone(caller.ext.username, caller.domain, callee.ext.extension, p.sipPort, { register: false, holdMs: 1500 }),
      [sipServer, '-i', '127.0.0.1', '-m', '1', '-au', caller.ext.username, '-ap', caller.password, '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 40_000 },
    );
    const early = await s.waitFor((n) => states(n).includes('early'), 15_000);
    const [d] = dialogInfo(early).dialogs;
    expect(d!['@direction']).to.equal('recipient');
    expect(text(d!.remote!.identity)).to.equal(`sip:${caller.ext.extension}@${caller.domain}`);
    const confirmed = await s.waitFor((n) => states(n).includes('confirmed'), 15_000);
    const ended = await s.waitFor((n) => states(n).includes('terminated'), 15_000);
    const [rc, re] = await Promise.all([calling.done, answering.done]);
    expect(rc.code, 'caller ' + rc.errors).to.equal(0);
    expect(re.code, 'callee ' + re.errors).to.equal(0);
    expect(dialogInfo(early).version).to.be.greaterThan(0);
    expect(dialogInfo(confirmed).version).to.be.greaterThan(dialogInfo(early).version);
    expect(dialogInfo(ended).version).to.be.greaterThan(dialogInfo(confirmed).version);
    // every NOTIFY's version is one more than the one before (RFC 4235 4.1)
    const versions = s.notifies.map((n) => dialogInfo(n).version);
    expect(versions).to.deep.equal(versions.map((_, i) => i));
  });

  it('shows the caller side as initiator with the callee as remote identity', async () => {
    const watcher = await createExtension();
    const caller = await createExtension(watcher.customerId);
    const callee = await createExtension(watcher.customerId);
    const s = await sub.subscribe({ user: watcher.ext.username, domain: watcher.domain, password: watcher.password, resource: caller.ext.extension, event: 'dialog', expires: 600 });
    await s.waitFor();
    const sipServer = `127.0.0.1:${p.sipPort}`;
    const phonePort = await freePort();
    await sipp(registerOnly(callee.ext.username, callee.domain), [sipServer, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', callee.ext.username, '-ap', callee.password]).done;
    const answering = await answeringPhone(callee, phonePort);
    await new Promise((r) => setTimeout(r, 300));
    const calling = sipp(callerPhone(caller.ext.username, caller.domain, callee.ext.extension, p.sipPort, { register: false }), await callerArgs(sipServer, caller));
    const confirmed = await s.waitFor((n) => states(n).includes('confirmed'), 15_000);
    const [d] = dialogInfo(confirmed).dialogs;
    expect(d!['@direction']).to.equal('initiator');
    expect(text(d!.remote!.identity)).to.equal(`sip:${callee.ext.extension}@${callee.domain}`);
    await s.waitFor((n) => states(n).includes('terminated'), 15_000);
    await Promise.all([calling.done, answering.done]);
  });

  it('refuses what it must: bad password 403, another customer 403, unknown extension 404, unknown event 489, too brief 423, unacceptable Accept 406', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const other = await createExtension();
    const base = { user: a.ext.username, domain: a.domain, password: a.password, resource: b.ext.extension, event: 'dialog', expires: 600 };
    expect((await sub.subscribe({ ...base, password: 'wrong' })).response.status).to.equal(403);
    expect((await sub.subscribe({ ...base, answerChallenge: false })).response.status).to.equal(407);
    expect((await sub.subscribe({ ...base, resource: other.ext.extension, resourceDomain: other.domain })).response.status).to.equal(403);
    expect((await sub.subscribe({ ...base, resource: 'nobody' })).response.status).to.equal(404);
    const bad = await sub.subscribe({ ...base, event: 'x-made-up' });
    expect(bad.response.status).to.equal(489);
    expect(bad.response.get('allow-events')).to.match(/dialog/);
    const brief = await sub.subscribe({ ...base, expires: 1 });
    expect(brief.response.status).to.equal(423);
    expect(brief.response.get('min-expires')).to.equal('2');
    const wrongAccept = await sub.subscribe({ ...base, accept: 'application/pidf+xml' });
    expect(wrongAccept.response.status).to.equal(406);
    expect(wrongAccept.response.get('accept')).to.equal('application/dialog-info+xml');
    // none of these left a subscription: no NOTIFY for any of them
    await new Promise((r) => setTimeout(r, 300));
    for (const s of [bad, brief, wrongAccept]) expect(s.notifies).to.have.length(0);
  });

  it('caps a long Expires at the maximum and ends on Expires: 0 with a terminated NOTIFY', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const s = await sub.subscribe({ user: a.ext.username, domain: a.domain, password: a.password, resource: b.ext.extension, event: 'dialog', expires: 999_999 });
    expect(s.response.status).to.be.oneOf([200, 202]);
    expect(Number(s.response.get('expires'))).to.equal(3600);
    await s.waitFor();
    const refreshed = await s.refresh(300);
    expect(refreshed.status).to.be.oneOf([200, 202]);
    expect(refreshed.get('expires')).to.equal('300');
    await s.waitFor((n) => dialogInfo(n).version === 1);
    const gone = await s.refresh(0);
    expect(gone.status).to.be.oneOf([200, 202]);
    const last = await s.waitFor((n) => /^terminated/.test(n.get('subscription-state') ?? ''));
    expect(dialogInfo(last).state).to.equal('full');
  });

  it('a subscription left unrefreshed expires with a terminated NOTIFY (reason=timeout)', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const s = await sub.subscribe({ user: a.ext.username, domain: a.domain, password: a.password, resource: b.ext.extension, event: 'dialog', expires: 2 });
    expect(s.response.get('expires')).to.equal('2');
    const last = await s.waitFor((n) => /^terminated/.test(n.get('subscription-state') ?? ''), 6000);
    expect(last.get('subscription-state')).to.match(/reason=timeout/);
  });

  it('a NOTIFY answered 481 ends the subscription: later changes send nothing', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const presence = p.app.factory.services.presence!;
    const s = await sub.subscribe({ user: a.ext.username, domain: a.domain, password: a.password, resource: b.ext.extension, event: 'dialog', expires: 600 });
    await s.waitFor();
    const before = presence.subscriptionCount;
    const dialogsBefore = p.drachtio.engine.stats().dialogs;
    sub.notifyAnswer = 481;
    try {
      await presence.publishState(a.customerId, b.ext.extension, [{ id: 'x1', state: 'early', direction: 'recipient' }]);
      await s.waitFor((n) => dialogInfo(n).version === 1);
      await new Promise((r) => setTimeout(r, 300));
      expect(presence.subscriptionCount).to.equal(before - 1);
      // the SUBSCRIBE dialog is gone from sip-server too (RFC 5057: 481 ends the dialog usage)
      expect(p.drachtio.engine.stats().dialogs).to.equal(dialogsBefore - 1);
    } finally {
      sub.notifyAnswer = 200;
    }
    await presence.publishState(a.customerId, b.ext.extension, []);
    await new Promise((r) => setTimeout(r, 700));
    expect(s.notifies).to.have.length(2);
  });

  it('hears a change another node writes (Redis) and NOTIFYs within 500 ms; a published feature resource is watchable', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    // another node: its own Redis connection writing the same store under the platform's prefix
    const other = new Redis(process.env.TEST_REDIS_URL!);
    try {
      const store = new PresenceStore(other, p.config.redisKeyPrefix);
      const s = await sub.subscribe({ user: a.ext.username, domain: a.domain, password: a.password, resource: b.ext.extension, event: 'dialog', expires: 600 });
      await s.waitFor();
      const t0 = Date.now();
      await store.setDialog(a.customerId, b.ext.extension, { id: 'leg-on-node-b', state: 'early', direction: 'recipient', remote: { uri: 'tel:+15550100', display: 'A & B <co>' } });
      const n = await s.waitFor((m) => states(m).includes('early'), 2000);
      expect(Date.now() - t0).to.be.lessThan(500);
      const [d] = dialogInfo(n).dialogs;
      expect(d!['@id']).to.equal('leg-on-node-b');
      const identity = d!.remote!.identity as { '#text': string; '@display': string };
      expect(identity['#text']).to.equal('tel:+15550100');
      expect(identity['@display']).to.equal('A & B <co>');
      await store.endDialog(a.customerId, b.ext.extension, { id: 'leg-on-node-b', state: 'early' });
      await s.waitFor((m) => states(m).join() === 'terminated');

      // a feature's resource (850: neither an extension nor a park slot, which are served unpublished:
      // park-blf.test.ts): subscribable once published, confirmed as the publisher says
      expect((await sub.subscribe({ user: a.ext.username, domain: a.domain, password: a.password, resource: '850', event: 'dialog', expires: 600 })).response.status).to.equal(404);
      await p.app.factory.services.presence!.publishState(a.customerId, '850', []);
      const slot = await sub.subscribe({ user: a.ext.username, domain: a.domain, password: a.password, resource: '850', event: 'dialog', expires: 600 });
      expect(slot.response.status).to.be.oneOf([200, 202]);
      expect(dialogInfo(await slot.waitFor()).dialogs).to.have.length(0);
      await store.publishState(a.customerId, '850', [{ id: 'parked-1', state: 'confirmed', remote: { uri: 'tel:+15550101' } }]);
      await slot.waitFor((m) => states(m).join() === 'confirmed');
      await store.publishState(a.customerId, '850', []);
      await slot.waitFor((m) => states(m).join() === 'terminated');
    } finally {
      other.disconnect();
    }
  });

  it('an extension holds at most SUBSCRIBE_MAX_PER_EXTENSION subscriptions on a node: the next gets 403 until one ends', async () => {
    const a = await createExtension();
    const targets = [await createExtension(a.customerId), await createExtension(a.customerId), await createExtension(a.customerId), await createExtension(a.customerId)];
    const subscribe = (t: { ext: { extension: string } }) => sub.subscribe({ user: a.ext.username, domain: a.domain, password: a.password, resource: t.ext.extension, event: 'dialog', expires: 600 });
    const held = [];
    for (const t of targets.slice(0, 3)) {
      const s = await subscribe(t);
      expect(s.response.status).to.be.oneOf([200, 202]);
      held.push(s);
    }
    const refused = await subscribe(targets[3]!);
    expect(refused.response.status).to.equal(403);
    expect(refused.response.get('warning')).to.match(/too many subscriptions/);
    await held[0]!.refresh(0);
    await held[0]!.waitFor((n) => /^terminated/.test(n.get('subscription-state') ?? ''));
    await new Promise((r) => setTimeout(r, 200));
    expect((await subscribe(targets[3]!)).response.status).to.be.oneOf([200, 202]);
    // another extension of the customer is not held back by this one's subscriptions
    const b = await createExtension(a.customerId);
    expect((await sub.subscribe({ user: b.ext.username, domain: b.domain, password: b.password, resource: targets[0]!.ext.extension, event: 'dialog', expires: 600 })).response.status).to.be.oneOf([
      200, 202,
    ]);
  });
});
