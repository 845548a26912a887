// sipp scenario steps shared by the suites that write their own scenarios (media-app, edge, xfer,
// conference, webphone): the requests and answers whose text is the same everywhere, with what
// differs between suites (CSeq numbers, SDP, the display name) as parameters.
import { loopbackSdp } from '../sdp';

const NEW_VIA = 'Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]';

/** The ACK of a 2xx (after `<recv response="200" rrs="true"/>`), with an SDP answer when given. */
export const ack = (cseq: number, sdp?: string) => `<send><![CDATA[
ACK [next_url] SIP/2.0
${NEW_VIA}
[last_From:]
[last_To:]
[routes]
Call-ID: [call_id]
CSeq: ${cseq} ACK
Max-Forwards: 70
${sdp ? `Content-Type: application/sdp\nContent-Length: [len]\n\n${sdp}` : 'Content-Length: 0\n'}
]]></send>`;

/**
 * The ACK of a non-2xx final answer (407, 486 …) to the INVITE sent to `uri`: `via` 'last' repeats
 * the INVITE's Via (its transaction), 'new' writes a Via of its own as some phones do.
 */
export const ackFailure = (uri: string, cseq: number, via: 'last' | 'new' = 'last') => `<send><![CDATA[
ACK ${uri} SIP/2.0
${via === 'last' ? '[last_Via:]' : NEW_VIA}
[last_From:]
[last_To:]
Call-ID: [call_id]
CSeq: ${cseq} ACK
Max-Forwards: 70
Content-Length: 0

]]></send>`;

/**
 * Our re-INVITE in the dialog (CSeq `cseq`) offering `sdp`, its Contact `user`@ our address (no user:
 * the address alone), `headers` (whole lines) before the body; then its 100 (optional), its 200 and our ACK.
 */
export function reinvite(cseq: number, sdp: string, o: { user?: string; headers?: string[] } = {}): string {
  return `<send retrans="500"><![CDATA[
INVITE [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
[last_From:]
[last_To:]
[routes]
Call-ID: [call_id]
CSeq: ${cseq} INVITE
Contact: <sip:${o.user ? `${o.user}@` : ''}[local_ip]:[local_port]>
Max-Forwards: 70
${(o.headers ?? []).map((h) => `${h}\n`).join('')}Content-Type: application/sdp
Content-Length: [len]

${sdp}
]]></send>
<recv response="100" optional="true"/>
<recv response="200"/>
${ack(cseq)}`;
}

/** The answer, with no body, to the request just received (`status` as '200 OK'). */
export const respond = (status: string) => `<send><![CDATA[
SIP/2.0 ${status}
[last_Via:]
[last_From:]
[last_To:]
[last_Call-ID:]
[last_CSeq:]
Content-Length: 0

]]></send>`;

/** 200 OK to the in-dialog request just received (a BYE, INFO, NOTIFY, CANCEL). */
export const ok200 = respond('200 OK');

/**
 * A callee's answer to the INVITE it waits for: 180 Ringing, then 200 OK with the loopback SDP of
 * `rtpPort` (retransmitted every 500 ms until the ACK when `retrans`); its To tag `[pid]<tag>[call_number]`,
 * its Contact `<sip:[user@][local_ip]:[local_port]>`.
 */
export function answerInvite(rtpPort: number, o: { tag: string; user?: string; retrans?: boolean }): string {
  const reply = (status: string, extra: string) => `<send><![CDATA[
SIP/2.0 ${status}
[last_Via:]
[last_From:]
[last_To:];tag=[pid]${o.tag}[call_number]
[last_Call-ID:]
[last_CSeq:]
Contact: <sip:${o.user ? `${o.user}@` : ''}[local_ip]:[local_port];transport=[transport]>
${extra}
]]></send>`;
  const answer = reply(
    '200 OK',
    `Content-Type: application/sdp
Content-Length: [len]

${loopbackSdp(rtpPort)}`,
  );
  return `<recv request="INVITE" crlf="true"/>
${reply('180 Ringing', 'Content-Length: 0\n')}
${o.retrans ? answer.replace('<send>', '<send retrans="500">') : answer}`;
}

/** Our BYE in the dialog, and its 200. */
export const bye = (cseq: number) => `<send retrans="500"><![CDATA[
BYE [next_url] SIP/2.0
${NEW_VIA}
[last_From:]
[last_To:]
[routes]
Call-ID: [call_id]
CSeq: ${cseq} BYE
Max-Forwards: 70
Content-Length: 0

]]></send>
<recv response="200"/>`;

export interface PhoneInvite {
  user: string;
  domain: string;
  /** The user part called, at `domain`. */
  target: string;
  /** The From display name. */
  display: string;
  sdp: string;
  /** The CSeq of the first INVITE (the one with credentials takes the next). */
  firstCseq: number;
  /** 'last' (default) or 'new': the Via of the ACK to the 407 (see ackFailure). */
  ackVia?: 'last' | 'new';
  /** Extra attributes of the first INVITE's `<send>` (e.g. ` start_rtd="setup"`). */
  firstAttrs?: string;
}

/** A registered phone's INVITE with SDP (credentials as sipp computes them when `auth`). */
export function phoneInvite(o: PhoneInvite, cseq: number, auth: boolean, attrs = ''): string {
  return `<send retrans="500"${attrs}><![CDATA[
INVITE sip:${o.target}@${o.domain} SIP/2.0
${NEW_VIA}
From: "${o.display}" <sip:${o.user}@${o.domain}>;tag=c[call_number]
To: <sip:${o.target}@${o.domain}>
Call-ID: [call_id]
CSeq: ${cseq} INVITE
Contact: <sip:${o.user}@[local_ip]:[local_port]>
Max-Forwards: 70
${auth ? '[authentication]\n' : ''}Content-Type: application/sdp
Content-Length: [len]

${o.sdp}
]]></send>`;
}

/**
 * A registered phone's call with digest: the INVITE, the platform's 407 and its ACK, the INVITE
 * again with credentials (CSeq firstCseq + 1), up to its optional 100.
 */
export function inviteWithDigest(o: PhoneInvite): string {
  const c = o.firstCseq;
  return `${phoneInvite(o, c, false, o.firstAttrs)}
<recv response="100" optional="true"/>
<recv response="407" auth="true"/>
${ackFailure(`sip:${o.target}@${o.domain}`, c, o.ackVia)}
${phoneInvite(o, c + 1, true)}
<recv response="100" optional="true"/>`;
}

/**
 * A re-INVITE from the platform (hold / unhold) answered 200 with our SDP (audio to `rtpPort`, the
 * direction that answers the offer: `inactive` to inactive, `recvonly` to sendonly, else sendrecv),
 * then its ACK.
 */
export const answerReinvite = (rtpPort: number, direction: 'inactive' | 'recvonly' | 'sendrecv', version: number) => `<recv request="INVITE" timeout="20000"/>
<send><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:]
[last_Call-ID:]
[last_CSeq:]
Contact: <sip:[local_ip]:[local_port]>
Content-Type: application/sdp
Content-Length: [len]

${loopbackSdp(rtpPort, { version, direction, events: '0-15' })}
]]></send>
<recv request="ACK"/>`;
