// An extension calls a telephone number: sip-server authenticates the phone's INVITE, media-app finds
// no platform number and sends it through the customer's routes to the provider's gateway (a sipp
// UAS); the first provider fails (503) and the next one answers (route fallback). Both legs end when
// the phone hangs up.
import { usePlatform } from '../../testkit/media-app/platform-hooks';
import { sipProvider } from '../../testkit/providers';
import { expect } from 'chai';
import { addBalance, ensureBillingAccount } from '../../core/billing';
import { routesRepo } from '../../core/repos/routes';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { answeringUas, createExtension, sipp, type Platform } from '../../testkit/media-app/harness';
import { phoneCallRefused, phoneCalls, registerOnly } from './support';
import { ownNumber } from '../media-app/originating';
import { bothLegsHungUp } from '../../testkit/call-ends';

function messageScenario(user: string, domain: string, to: string, text: string, expect: number): string {
  const msg = (cseq: number, auth: boolean) => `<send retrans="500"><![CDATA[
MESSAGE sip:${to}@${domain} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:${user}@${domain}>;tag=m[call_number]
To: <sip:${to}@${domain}>
Call-ID: [call_id]
CSeq: ${cseq} MESSAGE
Max-Forwards: 70
${auth ? '[authentication]\n' : ''}Content-Type: text/plain
Content-Length: [len]

${text}
]]></send>`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="message">
${msg(1, false)}
<recv response="407" auth="true"/>
${msg(2, true)}
<recv response="${expect}"/>
</scenario>`;
}

const messageReceiver = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="receiver">
<recv request="MESSAGE" timeout="20000"><action><ereg regexp="hello from the desk" search_in="body" check_it="true" assign_to="txt"/><log message="[$txt]"/></action></recv>
<send><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:];tag=rcv[call_number]
[last_Call-ID:]
[last_CSeq:]
Content-Length: 0

]]></send>
</scenario>`;

describe('extension to tel through routes and providers', function () {
  this.timeout(60_000);
  let p: Platform;
  // sipp answers only MD5 challenges: offer MD5 first
  usePlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' }, (x) => (p = x), { truncate: false });

  it('dials the provider gateways in route order; the answering one carries the call', async () => {
    const db = await testDb();
    const a = await createExtension();
    const [g1, g2] = [await freePort(), await freePort()];
    const provider = (port: number, name: string) => sipProvider(db, `127.0.0.1:${port}`, name);
    const first = await provider(g1, 'down');
    const second = await provider(g2, 'up');
    await routesRepo(db).create({ customer_id: a.customerId, name: 'r1', detail: '', provider_id: first.id, priority: 1, target: 'all' });
    await routesRepo(db).create({ customer_id: a.customerId, name: 'r2', detail: '', provider_id: second.id, priority: 2, target: 'all' });
    await repos(db).outboundConfigs.create({ customer_id: a.customerId, destination_whitelist: ['us'] }); // toll-fraud policy: PSTN needs a whitelist
    // the carrier sees an owned number, never the extension (core/calls/caller-id)
    const callerId = await ownNumber(db, a.customerId, { asDefault: true });
    const acc = await ensureBillingAccount(db, a.customerId); // a PSTN call is charged: the first minute must be affordable
    await addBalance(db, acc.id, 1_000_000, `ext-to-tel:${acc.id}`);
    const failing = sipp(answeringUas({ final: 503 }), ['-i', '127.0.0.1', '-p', String(g1), '-m', '1']);
    const gateway = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(g2), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
    await new Promise((r) => setTimeout(r, 300));
    const phone = sipp(
      phoneCalls(a.ext.username, a.domain, '+15557654321'),
      [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password, '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 40_000 },
    );
    const [rp, rf, rg] = await Promise.all([phone.done, failing.done, gateway.done]);
    expect(rp.code, 'phone ' + rp.errors + rp.messages).to.equal(0);
    expect(rf.code, rf.errors).to.equal(0);
    expect(rg.code, rg.errors + rg.messages).to.equal(0);
    expect(rf.messages).to.include(`INVITE sip:+15557654321@127.0.0.1:${g1} SIP/2.0`);
    expect(rg.messages).to.include(`INVITE sip:+15557654321@127.0.0.1:${g2} SIP/2.0`);
    expect(rg.messages).to.match(new RegExp(`^From: "Desk" <sip:\\${callerId}@`, 'm'));
    const [master, leg] = await bothLegsHungUp(a.customerId);
    expect(master.source).to.deep.include({ type: 'extension', target: a.ext.extension });
    expect(leg.source).to.deep.include({ type: 'tel', target: callerId });
    expect(master.destination).to.deep.include({ type: 'tel', target: '+15557654321' });
    expect(leg).to.include({ direction: 'outgoing', master_call_id: master.id, hangup_by: 'local' });
    expect(leg.destination).to.deep.include({ type: 'tel', target: '+15557654321' });
    expect(leg.tm_progressing).to.be.instanceOf(Date);
  });

  it('no route for the number: the phone gets 404 and no call is written', async () => {
    const db = await testDb();
    const a = await createExtension();
    const scenario = phoneCallRefused(a.ext.username, a.domain, '+15550000000', 404);
    const r = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password]).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(await db('calls').where({ customer_id: a.customerId })).to.have.length(0);
  });

  it('SIP MESSAGE from one extension to another is relayed to its registered contact', async () => {
    const a = await createExtension(undefined, {});
    const b = await createExtension(a.customerId);
    const server = `127.0.0.1:${p.sipPort}`;
    const bPort = await freePort();
    const reg = await sipp(registerOnly(b.ext.username, b.domain), [server, '-i', '127.0.0.1', '-p', String(bPort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    const receiver = sipp(messageReceiver, ['-i', '127.0.0.1', '-p', String(bPort), '-m', '1']);
    await new Promise((r) => setTimeout(r, 300));
    const sent = await sipp(messageScenario(a.ext.username, a.domain, b.ext.extension, 'hello from the desk', 200), [server, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password])
      .done;
    expect(sent.code, sent.errors + sent.messages).to.equal(0);
    const got = await receiver.done;
    expect(got.code, got.errors + got.messages).to.equal(0);
    expect(got.messages).to.include('hello from the desk');
    // an unknown extension: 404
    const unknown = await sipp(messageScenario(a.ext.username, a.domain, 'nobody', 'hi', 404), [server, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password]).done;
    expect(unknown.code, unknown.errors + unknown.messages).to.equal(0);
  });
});
