// sipp parties of the long-call tests: a phone that rings for a while, answers with its audio going to
// an RTP party (testkit/conference/party.ts), and then either waits for the platform's BYE or hangs up
// itself (a BYE from the answering side, in the dialog the INVITE made).
import { register } from '../media-app/uas-scenarios';
import { ack, bye, inviteWithDigest, ok200 } from '../media-app/sipp-steps';
import { loopbackSdp } from '../sdp';

/** SDP of a party whose audio goes to `port` on loopback (PCMU). */
export const sdpTo = (port: number) => loopbackSdp(port, { direction: null });

const reply = (status: string, contact: string, body?: string) => `<send${status.startsWith('200') ? ' retrans="500"' : ''}><![CDATA[
SIP/2.0 ${status}
[last_Via:]
[last_From:]
[last_To:];tag=[pid]lc[call_number]
[last_Call-ID:]
[last_CSeq:]
Contact: ${contact}
${body ? `Content-Type: application/sdp\nContent-Length: [len]\n\n${body}` : 'Content-Length: 0\n'}
]]></send>`;

/** The answering side's BYE in the dialog (From/To kept from the INVITE), and its 200. */
const uasBye = (contact: string) => `<send retrans="500"><![CDATA[
BYE [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: [$local_to];tag=[pid]lc[call_number]
To: [$remote_from]
[routes]
Call-ID: [call_id]
CSeq: 101 BYE
Contact: ${contact}
Max-Forwards: 70
Content-Length: 0

]]></send>
<recv response="200"/>`;

export interface AnswererOptions {
  /** Its audio: where the platform's RTP goes (an RtpParty's port). */
  rtpPort: number;
  /** Rings (180) this long before the 200 (default 0). */
  ringMs?: number;
  /** Hangs up (BYE) this long after the ACK; else it waits for the platform's BYE. */
  hangupAfterMs?: number;
  /** How long it waits for the INVITE and for the platform's BYE (default 60 s each). */
  timeoutMs?: number;
  /** The Contact user (a registered phone's username). */
  user?: string;
}

/**
 * A phone that is called: 180, `ringMs` of ringing, 200 with its SDP, ACK; then it hangs up after
 * `hangupAfterMs`, or takes the platform's BYE. Any request it does not expect ends sipp with an
 * error (a BYE during the pause too), which the test sees in the scenario's result.
 */
export function answerer(o: AnswererOptions): string {
  const contact = `<sip:${o.user ?? 'phone'}@[local_ip]:[local_port]>`;
  const timeout = o.timeoutMs ?? 60_000;
  const hangsUp = o.hangupAfterMs !== undefined;
  const invite = hangsUp
    ? `<recv request="INVITE" rrs="true" timeout="${timeout}"><action>
  <ereg regexp="&lt;.*" search_in="hdr" header="From:" assign_to="remote_from"/>
  <ereg regexp="&lt;.*" search_in="hdr" header="To:" assign_to="local_to"/>
</action></recv>`
    : `<recv request="INVITE" timeout="${timeout}"/>`;
  const end = hangsUp ? `<pause milliseconds="${o.hangupAfterMs}"/>\n${uasBye(contact)}` : `<recv request="BYE" timeout="${timeout}"/>\n${ok200}`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="answerer">
${invite}
${reply('180 Ringing', contact)}
${o.ringMs ? `<pause milliseconds="${o.ringMs}"/>` : ''}
${reply('200 OK', contact, sdpTo(o.rtpPort))}
<recv request="ACK"/>
${end}
</scenario>`;
}

/** A registered extension's phone that calls `target` (digest on the 407) and hangs up `hangupAfterMs` after its ACK. */
export function extensionCaller(o: { user: string; domain: string; target: string; rtpPort: number; hangupAfterMs: number }): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="extension-caller">
${register(o.user, o.domain)}
${inviteWithDigest({ user: o.user, domain: o.domain, target: o.target, display: 'Desk', sdp: sdpTo(o.rtpPort), firstCseq: 1, ackVia: 'new' })}
<recv response="180" optional="true"/>
<recv response="183" optional="true"/>
<recv response="200" rrs="true" timeout="60000"/>
${ack(2)}
<pause milliseconds="${o.hangupAfterMs}"/>
${bye(3)}
</scenario>`;
}
