/**
 * Keeps only loopback ICE candidates (127.0.0.0/8, ::1) in a local SDP and points its c= and m=
 * lines at the first loopback UDP candidate: for development and tests on one machine, where the
 * relay must never be told about (and so never send to) another interface of the host.
 */
const isLoopback = (addr: string) => /^127\./.test(addr) || addr === '::1';
const CANDIDATE = /^a=candidate:\S+ \d+ (\S+) \d+ (\S+) (\d+) /;

export function loopbackOnlySdp(sdp: string): string {
  const lines = sdp.split(/\r\n/).filter((l) => {
    const m = CANDIDATE.exec(l);
    return !m || isLoopback(m[2]!);
  });
  const udp = lines.map((l) => CANDIDATE.exec(l)).find((m) => m && m[1]!.toLowerCase() === 'udp' && m[2] === '127.0.0.1');
  if (!udp) return lines.join('\r\n');
  return lines
    .map((l) => {
      if (/^c=IN IP[46] /.test(l)) return 'c=IN IP4 127.0.0.1';
      const m = /^m=(audio|video) \d+ (.*)$/.exec(l);
      return m ? `m=${m[1]} ${udp[3]} ${m[2]}` : l;
    })
    .join('\r\n');
}
