/** sipp scenarios and helpers the fault tests share (the harness's sipp runner does the running). */
import { sipp, type SippResult } from '../../media-app/harness';
import { sippMediaPort } from '../../support/ports';

/** A caller that answers nothing itself: INVITE (audio to `rtpPort`), ACK, waits `holdMs`, sends BYE. */
export function callerHangsUp(ruri: string, rtpPort: number, holdMs: number): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="caller-hangs-up">
<send retrans="500"><![CDATA[
INVITE sip:${ruri} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: "Caller" <sip:+15550001111@[local_ip]:[local_port]>;tag=[call_number]
To: <sip:${ruri}>
Call-ID: [call_id]
CSeq: 1 INVITE
Contact: <sip:caller@[local_ip]:[local_port]>
Max-Forwards: 70
Content-Type: application/sdp
Content-Length: [len]

v=0
o=- 1 1 IN IP4 127.0.0.1
s=-
c=IN IP4 127.0.0.1
t=0 0
m=audio ${rtpPort} RTP/AVP 0
a=rtpmap:0 PCMU/8000
a=sendrecv
]]></send>
<recv response="100" optional="true"/>
<recv response="180" optional="true"/>
<recv response="200" rrs="true"/>
<send><![CDATA[
ACK [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
[last_From:]
[last_To:]
[routes]
Call-ID: [call_id]
CSeq: 1 ACK
Max-Forwards: 70
Content-Length: 0

]]></send>
<pause milliseconds="${holdMs}"/>
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

/** One sipp call (-m 1) to the platform at `sipPort`, with its own media port block. */
export async function oneCall(scenario: string, sipPort: number, timeoutMs: number): Promise<SippResult> {
  const mp = await sippMediaPort();
  const secs = Math.ceil(timeoutMs / 1000);
  return sipp(scenario, [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mp', String(mp), '-timeout', `${secs}s`], { killAfterMs: timeoutMs + 5000 }).done;
}

/** Inter-arrival gaps (ms) of packets that arrived between `from` and `to` (performance.now() times). */
export function gapsBetween(times: number[], from: number, to: number): number[] {
  const inWindow = times.filter((t) => t >= from && t <= to);
  const gaps: number[] = [];
  for (let i = 1; i < inWindow.length; i++) gaps.push(inWindow[i]! - inWindow[i - 1]!);
  return gaps;
}

export function percentile(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
