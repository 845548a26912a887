// RFC 4028 session timers on real loopback SIP (sipp as the phone or trunk; media-app/call/session-timer.ts,
// media-app/kit/sip-session-timer.ts): an INVITE's Session-Expires is answered with the interval, the refresher
// and Require: timer; a phone that stops refreshing has its call ended with a BYE carrying
// `Reason: SIP;cause=408;text="Session timer expired"` (hangup_reason session_expired, hangup_by remote),
// one that refreshes (re-INVITE, UPDATE) stays up past twice the expiry; an interval below our Min-SE gets
// 422; our INVITEs offer a session timer, we refresh when the answer makes us the refresher, and a 422 to
// our INVITE is retried with the Min-SE it gave. Small values: Min-SE 2 s, our interval 6 s.
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { repos } from '../../core/repos';
import { testDb, truncateAll } from '../../testkit/db';
import { freePort, sippMediaPort, udpBound } from '../../testkit/ports';
import { ack, bye, ok200 } from '../../testkit/media-app/sipp-steps';
import { killAllSipp, sipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { dialingCall } from '../../testkit/media-app/originate';
import { loopbackSdp } from '../../testkit/sdp';

const SDP = (port: number | string) => loopbackSdp(port);

/** The SIP messages in sipp's -trace_msg log that it received, each as its text. */
function received(log: string): string[] {
  return log
    .split(/^-{10,}.*$/m)
    .filter((b) => /message received/.test(b))
    .map((b) => b.replace(/^[\s\S]*?message received[^\n]*\n\s*/, ''));
}
const first = (msgs: string[], start: RegExp) => msgs.find((m) => start.test(m.split('\n')[0] ?? '')) ?? '';
const all = (msgs: string[], start: RegExp) => msgs.filter((m) => start.test(m.split('\n')[0] ?? ''));

/** A phone's INVITE to `ruri` with a Session-Expires of its own (and `extra` headers). */
const phoneInvite = (ruri: string, se: string, extra = '') => `<send retrans="500"><![CDATA[
INVITE sip:${ruri} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:+15551230000@[local_ip]:[local_port]>;tag=[call_number]
To: <sip:${ruri}>
Call-ID: [call_id]
CSeq: 1 INVITE
Contact: <sip:phone@[local_ip]:[local_port]>
Max-Forwards: 70
Supported: timer
Session-Expires: ${se}
${extra}Content-Type: application/sdp
Content-Length: [len]

${SDP('[media_port]')}
]]></send>`;

/** A refresh from the phone inside the dialog: a re-INVITE with the same SDP, or an UPDATE without. */
const refresh = (method: 'INVITE' | 'UPDATE', cseq: number, se: string) => `<send retrans="500"><![CDATA[
${method} [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
[last_From:]
[last_To:]
[routes]
Call-ID: [call_id]
CSeq: ${cseq} ${method}
Contact: <sip:phone@[local_ip]:[local_port]>
Max-Forwards: 70
Supported: timer
Session-Expires: ${se}
${method === 'INVITE' ? `Content-Type: application/sdp\nContent-Length: [len]\n\n${SDP('[media_port]')}` : 'Content-Length: 0\n'}
]]></send>
<recv response="100" optional="true"/>
<recv response="200"/>
${method === 'INVITE' ? ack(cseq) : ''}`;

const scenario = (steps: string) => `<?xml version="1.0" encoding="ISO-8859-1" ?>\n<scenario name="st">\n${steps}\n</scenario>`;

/** A trunk (sipp UAS) answering our INVITE: `answer` is the text of its final response's headers after To. */
const uasAnswer = (status: string, headers: string, sdp: boolean) => `<send><![CDATA[
SIP/2.0 ${status}
[last_Via:]
[last_From:]
[last_To:];tag=[pid]st[call_number]
[last_Call-ID:]
[last_CSeq:]
Contact: <sip:[local_ip]:[local_port];transport=[transport]>
${headers}${sdp ? `Content-Type: application/sdp\nContent-Length: [len]\n\n${SDP('[media_port]')}` : 'Content-Length: 0\n'}
]]></send>`;

describe('RFC 4028 session timers (phones and trunks)', function () {
  this.timeout(120_000);
  let p: Platform;
  let cid: string;
  let n = 0;

  before(async () => {
    await truncateAll();
    // the media watch off: these sipp parties send no RTP
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SESSION_MIN_SE_SEC: '2', SESSION_EXPIRES_SEC: '6', MEDIA_INACTIVITY_TIMEOUT_MS: '0' });
    const db = await testDb();
    cid = (await repos(db).customers.create({ email: `st${Date.now()}@example.test`, status: 'active', name: 'st' })).id;
    // the phones and trunks of these tests call from loopback: a trunk of the customer by address
    await trunksRepo(db).create(cid, `st${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  });
  after(async () => {
    killAllSipp();
    await p?.close();
  });

  /** A number whose flow answers and echoes for a minute. */
  async function number(): Promise<string> {
    const db = await testDb();
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, { type: 'echo', option: { duration: 60_000 } }]) } as never);
    const num = `+8992000${String(++n).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number: num, type: 'virtual', call_flow_id: flow.id });
    return num;
  }

  async function ended(num: string): Promise<CallRow> {
    const db = await testDb();
    return until(
      async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }).whereRaw(`destination->>'target' = ?`, [num]).first()) as CallRow | undefined,
      20_000,
      `the call to ${num} ends`,
    );
  }

  const phone = async (steps: string) => sipp(scenario(steps), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 }).done;

  it('an INVITE with Session-Expires: 90;refresher=uac gets a 200 with Session-Expires and Require: timer', async () => {
    const num = await number();
    const r = await phone(`${phoneInvite(`${num}@127.0.0.1:${p.sipPort}`, '90;refresher=uac')}
<recv response="100" optional="true"/>
<recv response="180" optional="true"/>
<recv response="200" rrs="true"/>
${ack(1)}
<pause milliseconds="500"/>
${bye(2)}`);
    expect(r.code, r.errors + r.messages).to.equal(0);
    const ok = first(received(r.messages), /^SIP\/2\.0 200/);
    expect(ok).to.match(/^Session-Expires:\s*90;refresher=uac\s*$/im);
    expect(ok).to.match(/^Require:\s*timer\s*$/im);
    expect(ok).to.match(/^Supported:.*\btimer\b/im);
  });

  it('a Session-Expires below our Min-SE gets 422 with Min-SE', async () => {
    const num = await number();
    const r = await phone(`${phoneInvite(`${num}@127.0.0.1:${p.sipPort}`, '1;refresher=uac')}
<recv response="100" optional="true"/>
<recv response="422"/>
<send><![CDATA[
ACK sip:${num}@127.0.0.1:${p.sipPort} SIP/2.0
[last_Via:]
[last_From:]
[last_To:]
Call-ID: [call_id]
CSeq: 1 ACK
Max-Forwards: 70
Content-Length: 0

]]></send>`);
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(first(received(r.messages), /^SIP\/2\.0 422/)).to.match(/^Min-SE:\s*2\s*$/im);
  });

  it('a phone that stops refreshing: BYE with Reason 408 at interval − interval/3, hangup_reason session_expired', async () => {
    const num = await number();
    const t0 = performance.now();
    const r = await phone(`${phoneInvite(`${num}@127.0.0.1:${p.sipPort}`, '6;refresher=uac')}
<recv response="100" optional="true"/>
<recv response="180" optional="true"/>
<recv response="200" rrs="true"/>
${ack(1)}
<recv request="BYE" timeout="15000"/>
${ok200}`);
    const took = performance.now() - t0;
    expect(r.code, r.errors + r.messages).to.equal(0);
    // 6 s − min(32, 6/3) = 4 s after the 200
    expect(took).to.be.within(3800, 9000);
    expect(first(received(r.messages), /^BYE /)).to.match(/^Reason:\s*SIP;cause=408;text="Session timer expired"\s*$/im);
    const row = await ended(num);
    expect(row.hangup_reason).to.equal('session_expired');
    expect(row.hangup_by).to.equal('remote');
  });

  it('a phone that refreshes (re-INVITE, then UPDATE) stays up past twice the expiry', async () => {
    const num = await number();
    const r = await phone(`${phoneInvite(`${num}@127.0.0.1:${p.sipPort}`, '6;refresher=uac')}
<recv response="100" optional="true"/>
<recv response="180" optional="true"/>
<recv response="200" rrs="true"/>
${ack(1)}
<pause milliseconds="3000"/>
${refresh('INVITE', 2, '6;refresher=uac')}
<pause milliseconds="3000"/>
${refresh('UPDATE', 3, '6;refresher=uac')}
<pause milliseconds="3000"/>
${refresh('INVITE', 4, '6;refresher=uac')}
<pause milliseconds="2500"/>
${bye(5)}`);
    // 11.5 s up (the expiry is 4 s after each refresh): an early BYE from us would fail the scenario
    expect(r.code, r.errors + r.messages).to.equal(0);
    const oks = all(received(r.messages), /^SIP\/2\.0 200/).filter((m) => /^CSeq:\s*[234] (INVITE|UPDATE)/im.test(m));
    expect(oks).to.have.length(3);
    for (const ok of oks) expect(ok).to.match(/^Session-Expires:\s*6;refresher=uac\s*$/im);
    const row = await ended(num);
    expect(row.hangup_reason).to.equal('normal');
  });

  /** An outgoing call to a sipp trunk at `port` whose flow lasts `ms`. */
  async function originate(port: number, ms: number): Promise<string> {
    const db = await testDb();
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'echo', option: { duration: ms } }]) } as never);
    const row = await dialingCall(db, cid, flow.id, `trunk@127.0.0.1:${port}`);
    await p.app.factory.originate([row.id]);
    return row.id;
  }

  const trunk = async (port: number, steps: string) => sipp(scenario(steps), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 }).done;

  it('our INVITE offers a session timer; answered with us as refresher, we refresh at half the interval', async () => {
    const port = await freePort();
    const done = trunk(
      port,
      `<recv request="INVITE" crlf="true"/>
${uasAnswer('200 OK', 'Session-Expires: 6;refresher=uac\nRequire: timer\n', true)}
<recv request="ACK"/>
<recv request="INVITE" timeout="6000"/>
${uasAnswer('200 OK', 'Session-Expires: 6;refresher=uac\nRequire: timer\n', true)}
<recv request="ACK"/>
<recv request="INVITE" timeout="6000"/>
${uasAnswer('200 OK', 'Session-Expires: 6;refresher=uac\nRequire: timer\n', true)}
<recv request="ACK"/>
<recv request="BYE" timeout="15000"/>
${ok200}`,
    );
    await udpBound(port); // the trunk has bound its port: the INVITE waits in its socket
    const t0 = performance.now();
    const id = await originate(port, 7500);
    const r = await done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const invites = all(received(r.messages), /^INVITE /);
    expect(invites).to.have.length(3);
    expect(invites[0]).to.match(/^Session-Expires:\s*6\s*$/im);
    expect(invites[0]).to.match(/^Min-SE:\s*2\s*$/im);
    expect(invites[0]).to.match(/^Supported:.*\btimer\b/im);
    // the refreshes: the same SDP, refresher=uac (us)
    for (const re of invites.slice(1)) {
      expect(re).to.match(/^Session-Expires:\s*6;refresher=uac\s*$/im);
      expect(re.split(/\r?\n\r?\n/)[1]?.trim()).to.equal(invites[0]!.split(/\r?\n\r?\n/)[1]?.trim());
    }
    expect(performance.now() - t0).to.be.at.least(7000);
    const row = await until(async () => {
      const c = await callsRepo(await testDb()).get(id);
      return c?.status === 'hangup' ? c : null;
    }, 10_000);
    expect(row.hangup_reason).to.equal('normal');
  });

  it('a 422 to our INVITE is retried, same Call-ID, with the Min-SE it gave', async () => {
    const port = await freePort();
    const done = trunk(
      port,
      `<recv request="INVITE" crlf="true"/>
${uasAnswer('422 Session Interval Too Small', 'Min-SE: 30\n', false)}
<recv request="ACK"/>
<recv request="INVITE" timeout="5000"/>
${uasAnswer('200 OK', 'Session-Expires: 30;refresher=uas\nRequire: timer\n', true)}
<recv request="ACK"/>
<recv request="BYE" timeout="15000"/>
${ok200}`,
    );
    await udpBound(port);
    const id = await originate(port, 1500);
    const r = await done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const invites = all(received(r.messages), /^INVITE /);
    expect(invites).to.have.length(2);
    expect(invites[1]).to.match(/^Session-Expires:\s*30\s*$/im);
    expect(invites[1]).to.match(/^Min-SE:\s*30\s*$/im);
    const callId = (m: string) => /^Call-ID:\s*(\S+)/im.exec(m)?.[1];
    expect(callId(invites[1]!)).to.equal(callId(invites[0]!));
    const row = await until(async () => {
      const c = await callsRepo(await testDb()).get(id);
      return c?.status === 'hangup' ? c : null;
    }, 10_000);
    expect(row.hangup_reason).to.equal('normal');
  });
});
