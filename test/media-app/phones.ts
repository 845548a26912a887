// sipp phones for extension calls: a caller that registers and calls with digest, a callee that answers.
import { answeringUas, register, SIPP_SDP } from './harness';

/** A registered phone answering one call on its registration port (run it after registerOnly on that port). */
export const calleePhone = (user: string) =>
  answeringUas({ tag: '[pid]callee', contact: `<sip:${user}@[local_ip]:[local_port]>`, inviteTimeoutMs: 20000 });

export interface CallerPhoneOptions {
  /** REGISTER first (default true). */
  register?: boolean;
  /** Time INVITE → 200 OK as sipp's response-time `setup` (for -trace_rtt; default false). */
  timeSetup?: boolean;
  /** How long the call stays up before the BYE (default 1000 ms; 0: no pause). */
  holdMs?: number;
}

/** A phone that registers, then calls `target` with digest (407) and hangs up after a second. */
export function callerPhone(user: string, domain: string, target: string, proxyPort: number, opts: CallerPhoneOptions = {}): string {
  const { register: registers = true, timeSetup = false, holdMs = 1000 } = opts;
  const invite = (cseq: number, auth: boolean) => `<send retrans="500"${timeSetup && cseq === 1 ? ' start_rtd="setup"' : ''}><![CDATA[
INVITE sip:${target}@${domain} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: "Alice" <sip:${user}@${domain}>;tag=c[call_number]
To: <sip:${target}@${domain}>
Call-ID: [call_id]
CSeq: ${cseq} INVITE
Contact: <sip:${user}@[local_ip]:[local_port]>
Max-Forwards: 70
${auth ? '[authentication]\n' : ''}Content-Type: application/sdp
Content-Length: [len]

${SIPP_SDP}
]]></send>`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="caller">
${registers ? register(user, domain) : ''}
${invite(1, false)}
<recv response="100" optional="true"/>
<recv response="407" auth="true"/>
<send><![CDATA[
ACK sip:${target}@${domain} SIP/2.0
[last_Via:]
[last_From:]
[last_To:]
Call-ID: [call_id]
CSeq: 1 ACK
Max-Forwards: 70
Content-Length: 0

]]></send>
${invite(2, true)}
<recv response="100" optional="true"/>
<recv response="180" optional="true"/>
<recv response="200" rrs="true"${timeSetup ? ' rtd="setup"' : ''}/>
<send><![CDATA[
ACK [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
[last_From:]
[last_To:]
[routes]
Call-ID: [call_id]
CSeq: 2 ACK
Max-Forwards: 70
Content-Length: 0

]]></send>
${holdMs > 0 ? `<pause milliseconds="${holdMs}"/>` : ''}
<send retrans="500"><![CDATA[
BYE [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
[last_From:]
[last_To:]
[routes]
Call-ID: [call_id]
CSeq: 3 BYE
Max-Forwards: 70
Content-Length: 0

]]></send>
<recv response="200"/>
</scenario>`.replace(/PROXYPORT/g, String(proxyPort));
}
