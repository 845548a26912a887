// Presence (RFC 3856, PIDF) and the message-summary package (RFC 3842) on the real call plane:
// sip-server + a media-app node on loopback, sipp phones registering and calling, a raw UDP
// subscriber (testkit/pbx/subscriber.ts) whose NOTIFY bodies are parsed.
import { expect } from 'chai';
import { XMLParser } from 'fast-xml-parser';
import { truncateAll } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { createExtension, killAllSipp, registerOnly, sipp, startPlatform, type Platform } from '../../testkit/media-app/harness';
import { registerPhone, callerPhone, callerArgs, answeringPhone } from '../../testkit/media-app/phones';
import { Subscriber, type SipMessage } from '../../testkit/pbx/subscriber';
import { messageSummaryPackage, type MessageSummary } from '../../media-app/presence';

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', removeNSPrefix: true });

interface Pidf {
  basic: string;
  onThePhone: boolean;
}

function pidf(n: SipMessage): Pidf {
  expect(n.get('content-type')).to.equal('application/pidf+xml');
  const doc = xml.parse(n.body) as { presence: { tuple: { status: { basic: string } }; person?: { activities?: Record<string, unknown> } } };
  return { basic: doc.presence.tuple.status.basic, onThePhone: Object.keys(doc.presence.person?.activities ?? {}).includes('on-the-phone') };
}

describe('presence and message summary: SUBSCRIBE Event: presence / message-summary', function () {
  this.timeout(90_000);
  let p: Platform;
  let sub: Subscriber;

  before(async () => {
    await truncateAll();
    p = await startPlatform();
    sub = await Subscriber.open(p.sipPort);
  });
  after(async () => {
    killAllSipp();
    sub?.close();
    await p?.close();
  });

  it('is closed while the extension is not registered, open once it registers, on the phone during a call, closed after un-REGISTER', async () => {
    const watcher = await createExtension();
    const b = await createExtension(watcher.customerId);
    const caller = await createExtension(watcher.customerId);
    const s = await sub.subscribe({
      user: watcher.ext.username,
      domain: watcher.domain,
      password: watcher.password,
      resource: b.ext.extension,
      event: 'presence',
      accept: 'application/pidf+xml',
      expires: 600,
    });
    expect(s.response.status).to.be.oneOf([200, 202]);
    expect(pidf(await s.waitFor())).to.deep.equal({ basic: 'closed', onThePhone: false });

    const sipServer = `127.0.0.1:${p.sipPort}`;
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(b.ext.username, b.domain), [sipServer, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    await s.waitFor((n) => pidf(n).basic === 'open' && !pidf(n).onThePhone);

    const answering = await answeringPhone(b, phonePort);
    await new Promise((r) => setTimeout(r, 300));
    const calling = sipp(callerPhone(caller.ext.username, caller.domain, b.ext.extension, p.sipPort, { register: false, holdMs: 1500 }), await callerArgs(sipServer, caller));
    const busy = await s.waitFor((n) => pidf(n).onThePhone, 15_000);
    expect(pidf(busy).basic).to.equal('open');
    const [rc, re] = await Promise.all([calling.done, answering.done]);
    expect(rc.code, rc.errors).to.equal(0);
    expect(re.code, re.errors).to.equal(0);
    const idx = s.notifies.indexOf(busy);
    await s.waitFor((n) => s.notifies.indexOf(n) > idx && !pidf(n).onThePhone, 10_000);

    const unreg = await registerPhone(sipServer, b, '127.0.0.1', phonePort, registerOnly(b.ext.username, b.domain).replace(/Expires: 3600/g, 'Expires: 0'));
    expect(unreg.code, unreg.errors).to.equal(0);
    const closed = await s.waitFor((n) => s.notifies.indexOf(n) > idx && pidf(n).basic === 'closed', 10_000);
    // each NOTIFY carries the whole state (never a partial document)
    expect(pidf(closed).onThePhone).to.equal(false);
  });

  it('refuses an Accept without PIDF (406) and a subscriber of another customer (403)', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const stranger = await createExtension();
    const base = { user: a.ext.username, domain: a.domain, password: a.password, resource: b.ext.extension, event: 'presence', expires: 600 };
    const r = await sub.subscribe({ ...base, accept: 'application/xpidf+xml' });
    expect(r.response.status).to.equal(406);
    expect(r.response.get('accept')).to.equal('application/pidf+xml');
    const other = await sub.subscribe({ ...base, user: stranger.ext.username, domain: stranger.domain, password: stranger.password, resourceDomain: b.domain });
    expect(other.response.status).to.equal(403);
  });

  it("message-summary: a provider plugged in at run time (replacing voicemail's) lights and clears the lamp on its change notices", async () => {
    const a = await createExtension();
    const counts = new Map<string, MessageSummary>([[a.ext.extension, { newMessages: 2, oldMessages: 1, urgentNew: 1 }]]);
    const presence = p.app.factory.services.presence!;
    // voicemail's provider is plugged in at start: an extension without a box has no counts
    const before = await sub.subscribe({ user: a.ext.username, domain: a.domain, password: a.password, resource: a.ext.extension, event: 'message-summary', expires: 600 });
    expect(before.response.status).to.be.oneOf([200, 202]);
    expect((await before.waitFor()).body).to.equal(`Messages-Waiting: no\r\nMessage-Account: sip:${a.ext.extension}@${a.domain}\r\n`);
    await before.refresh(0);
    presence.addPackage(messageSummaryPackage({ summary: async (customerId, resource) => (customerId === a.customerId ? (counts.get(resource) ?? null) : null) }));
    const s = await sub.subscribe({ user: a.ext.username, domain: a.domain, password: a.password, resource: a.ext.extension, event: 'message-summary', expires: 600 });
    expect(s.response.status).to.be.oneOf([200, 202]);
    const first = await s.waitFor();
    expect(first.get('content-type')).to.equal('application/simple-message-summary');
    expect(first.body).to.match(/^Messages-Waiting: yes\r\n/);
    expect(first.body).to.include(`Message-Account: sip:${a.ext.extension}@${a.domain}\r\n`);
    expect(first.body).to.include('Voice-Message: 2/1 (1/0)');
    counts.set(a.ext.extension, { newMessages: 0, oldMessages: 3 });
    await presence.notifyChange(a.customerId, a.ext.extension, 'message-summary');
    const cleared = await s.waitFor((n) => /Messages-Waiting: no/.test(n.body));
    expect(cleared.body).to.include('Voice-Message: 0/3 (0/0)');
    // a name that is neither an extension nor a mailbox of the provider
    const none = await sub.subscribe({ user: a.ext.username, domain: a.domain, password: a.password, resource: 'no-such-box', event: 'message-summary', expires: 600 });
    expect(none.response.status).to.equal(404);
  });
});
