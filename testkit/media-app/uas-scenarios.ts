// sipp UAS scenarios of a phone: it answers (after a pause, or never), refuses, or meets a CANCEL, and
// registers first when it is an extension. Re-exported by harness.ts.
import { ok200 } from './sipp-steps';

/** SDP of a sipp party: PCMU on sipp's media port. */
export const SIPP_SDP = `v=0
o=- 1 1 IN IP4 [local_ip]
s=-
c=IN IP4 [local_ip]
t=0 0
m=audio [media_port] RTP/AVP 0
a=rtpmap:0 PCMU/8000`;

function uasReply(status: string, tag: string, extra = '', cseq = '[last_CSeq:]'): string {
  return `SIP/2.0 ${status}
[last_Via:]
[last_From:]
[last_To:];tag=${tag}
[last_Call-ID:]
${cseq}
${extra}`;
}

export interface UasScenarioOptions {
  /** The To tag of our answer (sipp keywords allowed). */
  tag?: string;
  /** The Contact header value. */
  contact?: string;
  /** Wait this long between 180 and the final answer. */
  pauseMs?: number;
  /** With pauseMs: a CANCEL during the pause is answered (200, then 487) and the call ends there, as a phone ringing would. */
  cancelWhileRinging?: boolean;
  /** Answer with this failure status instead of 200. */
  final?: number;
  /** Wait for the caller's CANCEL and answer it (200, then 487 to the INVITE). */
  cancel?: boolean;
  /**
   * The 200 OK crosses the caller's CANCEL: sent when the CANCEL arrives (then 200 to the CANCEL), the
   * ACK taken, and the BYE that follows never answered (a phone that went away after answering).
   */
  answerOverCancel?: boolean;
  /** recv timeout for the INVITE (default: none, crlf after it). */
  inviteTimeoutMs?: number;
}

/**
 * A sipp UAS: INVITE → 180 → (pause) → 200 with SDP, then ACK and the platform's BYE, answered with 200.
 * Variants: a failure `final` status, or a caller CANCEL.
 */
export function answeringUas(o: UasScenarioOptions = {}): string {
  const tag = o.tag ?? '[pid]SIPpTag01[call_number]';
  const contact = `Contact: ${o.contact ?? '<sip:[local_ip]:[local_port];transport=[transport]>'}`;
  const invite = o.inviteTimeoutMs ? `<recv request="INVITE" timeout="${o.inviteTimeoutMs}"/>` : '<recv request="INVITE" crlf="true"/>';
  const parts = ['<?xml version="1.0" encoding="ISO-8859-1" ?>', '<scenario name="uas">', invite, `<send><![CDATA[\n${uasReply('180 Ringing', tag, `${contact}\nContent-Length: 0\n`)}\n]]></send>`];
  if (o.cancel) {
    parts.push(
      '<recv request="CANCEL" timeout="20000"/>',
      `<send><![CDATA[\n${uasReply('200 OK', tag, 'Content-Length: 0\n')}\n]]></send>`,
      `<send><![CDATA[\n${uasReply('487 Request Terminated', tag, 'Content-Length: 0\n', 'CSeq: [cseq] INVITE')}\n]]></send>`,
      '<recv request="ACK"/>',
    );
  } else if (o.answerOverCancel) {
    parts.push(
      '<recv request="CANCEL" timeout="20000"/>',
      `<send><![CDATA[\n${uasReply('200 OK', tag, `${contact}\nContent-Type: application/sdp\nContent-Length: [len]\n\n${SIPP_SDP}`, 'CSeq: [cseq] INVITE')}\n]]></send>`,
      `<send><![CDATA[\n${uasReply('200 OK', tag, 'Content-Length: 0\n')}\n]]></send>`,
      '<recv request="ACK" timeout="10000"/>',
      '<recv request="BYE" timeout="10000"/>',
      '<pause milliseconds="2000"/>',
    );
  } else if (o.final) {
    const reason = o.final === 486 ? 'Busy Here' : 'Service Unavailable';
    parts.push(`<send><![CDATA[\n${uasReply(`${o.final} ${reason}`, tag, 'Content-Length: 0\n')}\n]]></send>`, '<recv request="ACK"/>');
  } else {
    if (o.pauseMs && o.cancelWhileRinging) {
      // a CANCEL while it rings ends the call as a phone does (200, 487, ACK); else it answers after the pause
      parts.push(
        `<recv request="CANCEL" timeout="${o.pauseMs}" ontimeout="answer"/>`,
        `<send><![CDATA[\n${uasReply('200 OK', tag, 'Content-Length: 0\n')}\n]]></send>`,
        `<send><![CDATA[\n${uasReply('487 Request Terminated', tag, 'Content-Length: 0\n', 'CSeq: [cseq] INVITE')}\n]]></send>`,
        '<recv request="ACK" next="done"/>',
        '<label id="answer"/>',
      );
    } else if (o.pauseMs) parts.push(`<pause milliseconds="${o.pauseMs}"/>`);
    parts.push(
      `<send retrans="500"><![CDATA[\n${uasReply('200 OK', tag, `${contact}\nContent-Type: application/sdp\nContent-Length: [len]\n\n${SIPP_SDP}`)}\n]]></send>`,
      '<recv request="ACK"/>',
      '<recv request="BYE" timeout="20000"/>',
      ok200,
    );
    if (o.pauseMs && o.cancelWhileRinging) parts.push('<label id="done"/>');
  }
  parts.push('</scenario>');
  return parts.join('\n');
}

/** One REGISTER of the digest exchange: the first (CSeq 1), or the one with sipp's [authentication] (CSeq 2). */
const registerRequest = (user: string, domain: string, authenticated: boolean) => `<send retrans="500"><![CDATA[
REGISTER sip:${domain} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:${user}@${domain}>;tag=r[call_number]
To: <sip:${user}@${domain}>
Call-ID: [call_id]
CSeq: ${authenticated ? 2 : 1} REGISTER
Contact: <sip:${user}@[local_ip]:[local_port]>
Expires: 3600
Max-Forwards: 70
${authenticated ? '[authentication]\n' : ''}Content-Length: 0

]]></send>`;

/** REGISTER with digest (sipp answers the 401 itself), as a scenario fragment. */
export const register = (user: string, domain: string) => `
${registerRequest(user, domain, false)}
<recv response="401" auth="true"/>
${registerRequest(user, domain, true)}
<recv response="200"/>`;

/** sipp in client mode drops requests of unknown calls: the phone registers, then answers as a UAS on the same port. */
export function registerOnly(user: string, domain: string): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="register">
${register(user, domain)}
</scenario>`;
}
