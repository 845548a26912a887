// sipp scenario steps shared by the late-offer and NAT suites.

/** The ACK of a 2xx (after `<recv response="200" rrs="true"/>`), with an SDP answer when given. */
export const ack = (cseq: number, sdp?: string) => `<send><![CDATA[
ACK [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
[last_From:]
[last_To:]
[routes]
Call-ID: [call_id]
CSeq: ${cseq} ACK
Max-Forwards: 70
${sdp ? `Content-Type: application/sdp\nContent-Length: [len]\n\n${sdp}` : 'Content-Length: 0\n'}
]]></send>`;
