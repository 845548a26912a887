// Late offer (RFC 3261 13.2.1): an INVITE without SDP gets our offer in the 200 and the caller's
// answer comes in the ACK; an SDP-less re-INVITE on an up call is answered with an offer and the
// ACK's answer moves the media. sipp is a trunk; RtpSink ports on loopback hear the flow's speech.
// Both media backends: on fsmrf the re-INVITE's offer is the switch's SDP re-offered
// (media-app/media-server/README.md "Hold on fsmrf"), the ACK's answer goes to the switch.
import { expect } from 'chai';
import { truncateAll } from '../../testkit/db';
import { talkingNumber } from './talking-number';
import { ack } from '../../testkit/media-app/sipp-steps';
import { answerBye, killAllSipp, RtpSink, sipp, startPlatform, type Platform } from '../../testkit/media-app/harness';
import { loopbackSdp } from '../../testkit/sdp';

const answerSdp = (port: number) => loopbackSdp(port, { session: 2, version: 2 });

/** INVITE (with or without SDP) → 200 (must carry SDP when we sent none) → ACK [with the answer]. */
function invite(ruri: string, from: string, sdp: string | null, cseq = 1, inDialog = false): string {
  const head = inDialog ? `INVITE [next_url] SIP/2.0` : `INVITE sip:${ruri} SIP/2.0`;
  const fromTo = inDialog ? '[last_From:]\n[last_To:]\n[routes]' : `From: "Late" <sip:${from}@[local_ip]:[local_port]>;tag=[call_number]\nTo: <sip:${ruri}>`;
  return `<send retrans="500"><![CDATA[
${head}
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
${fromTo}
Call-ID: [call_id]
CSeq: ${cseq} INVITE
Contact: <sip:${from}@[local_ip]:[local_port]>
Max-Forwards: 70
${sdp ? `Content-Type: application/sdp\nContent-Length: [len]\n\n${sdp}` : 'Content-Length: 0\n'}
]]></send>
<recv response="100" optional="true"/>
<recv response="180" optional="true"/>
<recv response="183" optional="true"/>
<recv response="200" rrs="true">
  <action><ereg regexp="m=audio [0-9]+ RTP/AVP" search_in="body" check_it="true" assign_to="offer"/></action>
</recv>`;
}

for (const backend of ['embedded', 'fsmrf'] as const) {
  describe(`media-app late offer on the ${backend} media backend`, function () {
    this.timeout(90_000);
    let p: Platform;
    let number = '';

    before(async () => {
      await truncateAll();
      p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }, { mediaServer: backend });
      number = '+899100000777';
      await talkingNumber(number, 'Hello. Thank you for calling. This is a test of the platform. It goes on for a while so that the media can move.');
    });
    after(async () => {
      killAllSipp();
      await p?.close();
    });

    it('an INVITE without SDP: our offer in the 200, the answer in the ACK, speech reaches the caller', async () => {
      const sink = await RtpSink.open();
      try {
        const ruri = `${number}@127.0.0.1:${p.sipPort}`;
        const scenario = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="late-offer">
${invite(ruri, '+15551230001', null)}
${ack(1, answerSdp(sink.port))}
${answerBye(20000)}
<Reference variables="offer"/>
</scenario>`;
        const r = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 40_000 }).done;
        expect(r.code, r.errors + r.messages).to.equal(0);
        expect(sink.voiced, `packets ${sink.packets}`).to.be.greaterThan(25);
      } finally {
        sink.close();
      }
    });

    it('an SDP-less re-INVITE is answered with an offer; the ACK answer moves the speech to the new port', async () => {
      const first = await RtpSink.open();
      const second = await RtpSink.open();
      try {
        const ruri = `${number}@127.0.0.1:${p.sipPort}`;
        const scenario = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="late-reinvite">
${invite(ruri, '+15551230002', answerSdp(first.port))}
${ack(1)}
<pause milliseconds="1500"/>
${invite(ruri, '+15551230002', null, 2, true)}
${ack(2, answerSdp(second.port))}
${answerBye(20000)}
<Reference variables="offer"/>
</scenario>`;
        const r = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 40_000 }).done;
        expect(r.code, r.errors + r.messages).to.equal(0);
        expect(first.voiced, `first ${first.packets}`).to.be.greaterThan(10);
        expect(second.voiced, `second ${second.packets}`).to.be.greaterThan(25);
      } finally {
        first.close();
        second.close();
      }
    });
  });
}
