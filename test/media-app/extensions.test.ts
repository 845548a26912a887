// Extension to extension: two sipp phones register with digest; one calls the other through
// sip-server and media-app (digest-authenticated INVITE, 407), media-app dials the callee's
// registered contact and bridges the two; the caller hangs up and the callee gets its BYE.
import { usePlatform } from '../../testkit/media-app/platform-hooks';
import { expect } from 'chai';
import { callsRepo } from '../../core/repos/calls';
import { testDb } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { createExtension, eventsFor, registerOnly, sipp, type Platform } from '../../testkit/media-app/harness';
import { callerPhone, extensionCall } from '../../testkit/media-app/phones';
import { bothLegsHungUp } from '../../testkit/call-ends';

describe('media-app extension to extension', function () {
  this.timeout(90_000);
  let p: Platform;

  usePlatform({ SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' }, (x) => (p = x));

  it('a registered phone calls another registered phone; both legs are recorded and hang up together', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const sipServer = `127.0.0.1:${p.sipPort}`;
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(b.ext.username, b.domain), [sipServer, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    expect(await p.app.registrar.bindings.get(`${b.ext.username}@${b.domain}`)).to.have.length(1);
    const [rc, re] = await extensionCall(a, b, sipServer, p.sipPort, phonePort);
    expect(rc.code, 'caller ' + rc.errors + rc.messages).to.equal(0);
    expect(re.code, 'callee ' + re.errors + re.messages).to.equal(0);

    const db = await testDb();
    const [master, leg] = await bothLegsHungUp(a.customerId);
    expect(master.source).to.deep.include({ type: 'extension', target: a.ext.extension });
    expect(master.destination).to.deep.include({ type: 'extension', target: b.ext.extension });
    expect(master).to.include({ hangup_by: 'remote', hangup_reason: 'normal' });
    expect(leg).to.include({ direction: 'outgoing', master_call_id: master.id, hangup_by: 'local', hangup_reason: 'normal' });
    expect(master.chained_call_ids).to.deep.equal([leg.id]);
    expect(leg.tm_progressing).to.be.instanceOf(Date);
    expect((await eventsFor(p.redis, leg.id)).map((e) => e.event_type)).to.deep.equal(['call_created', 'call_ringing', 'call_progressing', 'call_terminating', 'call_hangup']);
    expect((await callsRepo(db).get(master.id))!.tm_progressing).to.be.instanceOf(Date);
  });

  it('calling an extension that is not registered is refused (480) and writes no call', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const r = await sipp(
      callerPhone(a.ext.username, a.domain, b.ext.extension, p.sipPort)
        .replace('<recv response="180" optional="true"/>\n<recv response="200" rrs="true"/>', '<recv response="480"/>')
        .replace(/<send><!\[CDATA\[\nACK \[next_url\][\s\S]*<recv response="200"\/>\n<\/scenario>/, '</scenario>'),
      [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password],
    ).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(await (await testDb())('calls').where({ customer_id: a.customerId })).to.have.length(0);
  });

  it('an INVITE from an extension with a bad password gets 403 and no call', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const scenario = callerPhone(a.ext.username, a.domain, b.ext.extension, p.sipPort);
    // skip the REGISTER (it would fail too): INVITE, 407, ACK, INVITE with wrong credentials, 403
    const body = scenario.slice(scenario.indexOf('<send retrans="500"><![CDATA[\nINVITE'));
    const cut = body.indexOf('<recv response="100" optional="true"/>\n<recv response="180"');
    const s = `<?xml version="1.0" encoding="ISO-8859-1" ?>\n<scenario name="bad">\n${body.slice(0, cut)}<recv response="100" optional="true"/>\n<recv response="403"/>\n</scenario>`;
    const r = await sipp(s, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', 'not-the-password']).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(await (await testDb())('calls').where({ customer_id: a.customerId })).to.have.length(0);
  });
});
