// sipp steps (after the caller's ACK, before its wait for the BYE) for a caller that is sent a REFER
// inside its call: it checks Refer-To, then accepts (202, then NOTIFYs with sipfrags 100 and the final
// status, each answered 200) or refuses it. The NOTIFYs go back in the same dialog: From is the
// REFER's To (the caller's own tag), To is the REFER's From (the platform's tag).
import { respond } from '../media-app/sipp-steps';

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const recvRefer = (referTo: string) => `<recv request="REFER" timeout="20000">
  <action>
    <ereg regexp="&lt;${escapeRegex(referTo)}&gt;" search_in="hdr" header="Refer-To:" check_it="true" assign_to="referto"/>
    <ereg regexp=".*" search_in="hdr" header="From:" assign_to="rfrom"/>
    <ereg regexp=".*" search_in="hdr" header="To:" assign_to="rto"/>
  </action>
</recv>
<Reference variables="referto,rfrom,rto"/>`;

const notify = (cseq: number, sipfrag: string, final: boolean) => `<send retrans="500"><![CDATA[
NOTIFY [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From:[$rto]
To:[$rfrom]
[routes]
Call-ID: [call_id]
CSeq: ${cseq} NOTIFY
Max-Forwards: 70
Event: refer
Subscription-State: ${final ? 'terminated;reason=noresource' : 'active;expires=60'}
Content-Type: message/sipfrag;version=2.0
Content-Length: [len]

SIP/2.0 ${sipfrag}
]]></send>
<recv response="200"/>`;

/** Accepts the REFER to `referTo`; the referred call ends with `final` ('200 OK', '486 Busy Here'), or null: no final NOTIFY is sent. */
export function referAccepted(referTo: string, final: string | null = '200 OK'): string {
  return `${recvRefer(referTo)}
${respond('202 Accepted')}
<pause milliseconds="200"/>
${notify(2, '100 Trying', false)}${
    final === null
      ? ''
      : `
<pause milliseconds="300"/>
${notify(3, final, true)}`
  }`;
}

/** Refuses the REFER to `referTo` with `status` ('603 Decline'). */
export function referRefused(referTo: string, status: string): string {
  return `${recvRefer(referTo)}
${respond(status)}`;
}
