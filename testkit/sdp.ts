// The SDP of a test party on loopback (a sipp scenario's offer or answer, a stand-in phone): one PCMU
// audio stream at 127.0.0.1, optionally with RFC 4733 telephone-events on payload 101. Lines end in LF
// as the scenario templates write them (sipp sends them as they are).

export interface LoopbackSdp {
  /** the o= line's session id; 1 */
  session?: number;
  /** the o= line's session version (a re-offer raises it); 1 */
  version?: number;
  /** the direction attribute ('sendrecv', 'sendonly', 'inactive' …); null leaves it out */
  direction?: string | null;
  /** telephone-event/8000 on payload 101 with this fmtp range ('0-15'); null: PCMU alone */
  events?: string | null;
}

/** The SDP body of a party whose audio is at 127.0.0.1:`port` (a number, or a sipp keyword such as `[media_port]`). */
export function loopbackSdp(port: number | string, { session = 1, version = 1, direction = 'sendrecv', events = null }: LoopbackSdp = {}): string {
  const lines = ['v=0', `o=- ${session} ${version} IN IP4 127.0.0.1`, 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${port} RTP/AVP 0${events ? ' 101' : ''}`, 'a=rtpmap:0 PCMU/8000'];
  if (events) lines.push('a=rtpmap:101 telephone-event/8000', `a=fmtp:101 ${events}`);
  if (direction) lines.push(`a=${direction}`);
  return lines.join('\n');
}
