// A phone behind the Kamailio edge (testkit/scale/edge.ts), as the edge suites call it: a sipp UAS on
// 127.0.0.4 at the port it registered from, answering in dialog through the edge, called by a trunk
// caller (sipp on 127.0.0.1) through one of the cluster's nodes.
import { answerBye, sipp, SIPP_SDP, uacWaitsForBye } from '../media-app/harness';
import { sippMediaPort, udpBound } from '../ports';

/** A phone answering one call on its registration port; its answer echoes Record-Route (in dialog through the edge). */
export function edgePhoneUas(user: string): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="phone">
<recv request="INVITE" timeout="20000" rrs="true"/>
<send><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:];tag=[pid]ph[call_number]
[last_Call-ID:]
[last_CSeq:]
[last_Record-Route:]
Contact: <sip:${user}@[local_ip]:[local_port]>
Content-Type: application/sdp
Content-Length: [len]

${SIPP_SDP}
]]></send>
<recv request="ACK"/>
${answerBye(20_000)}
</scenario>`;
}

export type SippRun = ReturnType<typeof sipp>;

/**
 * The phone `user` starts answering at 127.0.0.4:`phonePort` (edgePhoneUas); then a trunk caller hearing
 * at `sinkPort` calls `number` through the node at `nodeSipPort` and hangs up after 1.5 s.
 */
export async function callEdgePhone(nodeSipPort: number, number: string, user: string, phonePort: number, sinkPort: number): Promise<{ caller: SippRun; callee: SippRun }> {
  const callee = sipp(edgePhoneUas(user), ['-i', '127.0.0.4', '-p', String(phonePort), '-m', '1', '-mi', '127.0.0.4', '-mp', String(await sippMediaPort('127.0.0.4'))], {
    killAfterMs: 40_000,
  });
  await udpBound(phonePort); // the phone answers before the call can reach it
  const caller = sipp(uacWaitsForBye(`${number}@127.0.0.1:${nodeSipPort}`, 'pbx', sinkPort, { hangUpAfterMs: 1500 }), [`127.0.0.1:${nodeSipPort}`, '-i', '127.0.0.1', '-m', '1'], {
    killAfterMs: 40_000,
  });
  return { caller, callee };
}
