// The sipp party a hold re-INVITEs (test/media-app/call-controls.test.ts, hold-backends.test.ts): it
// answers with its audio to an RTP port of the test, then takes one re-INVITE per expected direction.
import type { SippResult } from '../../testkit/media-app/harness';
import { loopbackSdp } from '../../testkit/sdp';

export type HeldDirection = 'inactive' | 'sendonly' | 'sendrecv';

const sdp = (port: number, version: number, direction: string) => loopbackSdp(port, { version, direction });

const ok = (body: string, tag = '') => `<send><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:]${tag}
[last_Call-ID:]
[last_CSeq:]
Contact: <sip:[local_ip]:[local_port]>
Content-Type: application/sdp
Content-Length: [len]

${body}
]]></send>`;

/**
 * A party answering with its audio to `port`, then taking one re-INVITE per expected direction
 * (sipp fails the call when the offer lacks it) and answering each per RFC 3264 §6.1.
 */
export function heldParty(port: number, reinvites: HeldDirection[]): string {
  const answer = { inactive: 'inactive', sendonly: 'recvonly', sendrecv: 'sendrecv' } as const;
  const parts = [
    '<?xml version="1.0" encoding="ISO-8859-1" ?>',
    '<scenario name="held party">',
    '<recv request="INVITE"/>',
    ok(sdp(port, 1, 'sendrecv'), ';tag=[pid]held[call_number]').replace('<send>', '<send retrans="500">'),
    '<recv request="ACK"/>',
  ];
  reinvites.forEach((d, i) => {
    parts.push(
      `<recv request="INVITE" timeout="30000"><action><ereg regexp="a=${d}" search_in="body" check_it="true" assign_to="d${i}"/><log message="re-INVITE ${i} [$d${i}]"/></action></recv>`,
      ok(sdp(port, i + 2, answer[d])),
      '<recv request="ACK"/>',
    );
  });
  parts.push('<recv request="BYE" timeout="60000"/>', ok('').replace(/Content-Type: application\/sdp\n/, ''), '</scenario>');
  return parts.join('\n');
}

/** The a= direction of each INVITE the party received, in order. */
export function offeredDirections(r: SippResult): string[] {
  return r.messages
    .split(/-{10,}/)
    .filter((m) => /^\s*INVITE sip:/m.test(m) && /received/.test(m))
    .map((m) => /^a=(sendrecv|sendonly|recvonly|inactive)\s*$/m.exec(m)?.[1] ?? 'none');
}

/** The o= version of each INVITE's SDP the party received, in order. */
export function offeredVersions(r: SippResult): number[] {
  return r.messages
    .split(/-{10,}/)
    .filter((m) => /^\s*INVITE sip:/m.test(m) && /received/.test(m))
    .map((m) => Number(/^o=\S+ \S+ (\d+) /m.exec(m)?.[1] ?? NaN));
}
