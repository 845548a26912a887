// sipp UAC scenarios for conference tests: the callers' audio is an RtpParty (its port in the SDP).
import { uacWaitsForBye } from '../media-app/harness';

export { uacWaitsForBye };

/** INVITE, 200, ACK, then after `pauseMs` our own BYE (the party leaves by hanging up). */
export function uacHangsUpAfter(ruri: string, fromUser: string, rtpPort: number, pauseMs: number): string {
  const full = uacWaitsForBye(ruri, fromUser, rtpPort);
  const head = full.slice(0, full.indexOf('<recv request="BYE"'));
  return `${head}<pause milliseconds="${pauseMs}"/>
<send retrans="500"><![CDATA[
BYE [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
[last_From:]
[last_To:]
[routes]
Call-ID: [call_id]
CSeq: 2 BYE
Max-Forwards: 70
Content-Length: 0

]]></send>
<recv response="200"/>
</scenario>`;
}
