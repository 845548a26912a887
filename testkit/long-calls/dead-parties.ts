// sipp parties for the tests where a party dies mid-call: each talks with sipp's own RTP
// (play_pcap_audio), so a kill -9 of its sipp stops its SIP and its RTP at once, as a phone that loses
// power or a trunk whose host is gone; the party that stays waits for the platform's BYE, which its
// message trace shows (receivedRequests).
import path from 'node:path';
import type { CallSession } from '../../media-app/call/session';
import { writeRtpPcap } from '../ai/audio';
import { until, type Platform } from '../media-app/harness';
import { ok200 } from '../media-app/sipp-steps';

/** A pcap in `dir` of `ms` of µ-law audio (not silence: the receive watch counts packets, the checks hear it). */
export function talkPcap(dir: string, name: string, ms: number): string {
  const file = path.join(dir, name);
  writeRtpPcap(file, Buffer.alloc((ms / 1000) * 8000, 0x55));
  return file;
}

/** Scenario step: sipp starts sending `pcap`'s RTP to the far end's SDP address and goes on. */
export const playPcap = (pcap: string) => `<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`;

/**
 * A called party (a phone, a trunk, a carrier) that answers at once with its SDP (sipp's own media port),
 * talks `pcap` after the ACK and waits up to `byeTimeoutMs` for the platform's BYE, which it answers.
 */
export function talkingCallee(pcap: string, byeTimeoutMs = 20_000): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="talking-callee">
<recv request="INVITE" crlf="true"/>
<send retrans="500"><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:];tag=[pid]dp[call_number]
[last_Call-ID:]
[last_CSeq:]
Contact: <sip:[local_ip]:[local_port];transport=[transport]>
Content-Type: application/sdp
Content-Length: [len]

v=0
o=- 1 1 IN IP4 127.0.0.1
s=-
c=IN IP4 127.0.0.1
t=0 0
m=audio [media_port] RTP/AVP 0
a=rtpmap:0 PCMU/8000
a=sendrecv
]]></send>
<recv request="ACK"/>
${playPcap(pcap)}
<recv request="BYE" timeout="${byeTimeoutMs}"/>
${ok200}
</scenario>`;
}

/** The SIP requests of `method` a sipp received (its -trace_msg log), each as its text. */
export function receivedRequests(log: string, method: string): string[] {
  return log
    .split(/^-{10,}.*$/m)
    .filter((b) => /message received/.test(b))
    .map((b) => b.replace(/^[\s\S]*?message received[^\n]*\n\s*/, ''))
    .filter((m) => m.startsWith(`${method} `));
}

/** Resolves once `packets` of the party's RTP (25: half a second) have reached the platform's endpoint of call `id`. */
export async function talking(p: Pick<Platform, 'app'>, id: string, who: string, packets = 25): Promise<void> {
  const received = async () => {
    const ep = (p.app.calls.get(id) as CallSession | undefined)?.endpoint;
    return ep ? ((await ep.getStats().catch(() => null))?.packetsReceived ?? 0) : 0;
  };
  await until(async () => (await received()) >= packets || null, 10_000, `${who}’s RTP at the platform`);
}
