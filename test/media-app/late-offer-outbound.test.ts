// Late offer on an OUTBOUND leg: the platform dialled a sipp callee (its INVITE carries the engine's
// offer); once up, the callee sends a re-INVITE without SDP. The platform answers with a fresh offer
// in the 200 and the callee's answer in the ACK moves the flow's speech to the new port.
import { expect } from 'chai';
import type { CommandBus } from '../../core/commands/bus';
import { parseActions } from '../../core/flow';
import { callsRepo } from '../../core/repos/calls';
import { flowsRepo } from '../../core/repos/flows';
import { repos } from '../../core/repos';
import { testDb, truncateAll } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { answerBye, RtpSink, sipp, until } from '../../testkit/media-app/harness';
import { startOriginating, type Originating } from './originating';
import { dialingCall } from '../../testkit/media-app/originate';
import { loopbackSdp } from '../../testkit/sdp';

const sdp = (port: number, version: number) => loopbackSdp(port, { session: 7, version });

/** The callee: answers with audio to `first`, then re-INVITEs without SDP and answers the platform's offer in the ACK with `second`. */
function callee(first: number, second: number): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="outbound-late-reinvite">
<recv request="INVITE" crlf="true">
  <action>
    <ereg regexp="m=audio [0-9]+ RTP/AVP" search_in="body" check_it="true" assign_to="first_offer"/>
    <ereg regexp=".*" search_in="hdr" header="From:" check_it="true" assign_to="remote_from"/>
    <ereg regexp="sip:[^>;]+" search_in="hdr" header="Contact:" check_it="true" assign_to="remote_contact"/>
  </action>
</recv>
<send><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:];tag=[pid]late[call_number]
[last_Call-ID:]
[last_CSeq:]
Contact: <sip:callee@[local_ip]:[local_port]>
Content-Type: application/sdp
Content-Length: [len]

${sdp(first, 1)}
]]></send>
<recv request="ACK"/>
<pause milliseconds="1500"/>
<send retrans="500"><![CDATA[
INVITE [$remote_contact] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:callee@[local_ip]:[local_port]>;tag=[pid]late[call_number]
To: [$remote_from]
Call-ID: [call_id]
CSeq: 1 INVITE
Contact: <sip:callee@[local_ip]:[local_port]>
Max-Forwards: 70
Content-Length: 0

]]></send>
<recv response="100" optional="true"/>
<recv response="200">
  <action><ereg regexp="m=audio [0-9]+ RTP/AVP" search_in="body" check_it="true" assign_to="reoffer"/></action>
</recv>
<send><![CDATA[
ACK [$remote_contact] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:callee@[local_ip]:[local_port]>;tag=[pid]late[call_number]
To: [$remote_from]
Call-ID: [call_id]
CSeq: 1 ACK
Max-Forwards: 70
Content-Type: application/sdp
Content-Length: [len]

${sdp(second, 2)}
]]></send>
${answerBye(30000)}
<Reference variables="first_offer,reoffer"/>
</scenario>`;
}

describe('media-app late offer on an outbound leg', function () {
  this.timeout(90_000);
  let o: Originating;
  let bus: CommandBus;

  before(async () => {
    await truncateAll();
    o = await startOriginating({});
    ({ bus } = o);
  });
  after(async () => o?.close());

  it("the callee's SDP-less re-INVITE gets our offer in the 200; the ACK's answer moves the speech to the new port", async () => {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `late${Date.now()}@example.test`, status: 'active', name: 'late' })).id;
    const text = 'This is a long announcement about your appointment tomorrow at nine in the morning, please listen carefully until the end of this message.';
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'talk', option: { text, language: 'en-US' } }, { type: 'hangup' }]),
    } as never);
    const port = await freePort();
    const row = await dialingCall(db, cid, flow.id, `callee@127.0.0.1:${port}`);
    const first = await RtpSink.open();
    const second = await RtpSink.open();
    try {
      const uas = sipp(callee(first.port, second.port), ['-i', '127.0.0.1', '-p', String(port), '-m', '1'], { killAfterMs: 60_000 });
      await bus.originate([row.id], cid);
      const r = await uas.done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      const done = await until(async () => ((await callsRepo(db).get(row.id))?.status === 'hangup' ? callsRepo(db).get(row.id) : null), 15_000, 'hangup');
      expect(done!.hangup_reason).to.equal('normal');
      expect(first.voiced, `first ${first.packets}`).to.be.greaterThan(10);
      expect(second.voiced, `second ${second.packets}`).to.be.greaterThan(25);
    } finally {
      first.close();
      second.close();
    }
  });
});
