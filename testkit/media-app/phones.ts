// sipp phones for extension calls: a caller that registers and calls with digest, a callee that answers.
import { answeringUas, register, SIPP_SDP } from './harness';
import { ack, bye, inviteWithDigest } from './sipp-steps';

/** A registered phone answering one call on its registration port (run it after registerOnly on that port). */
export const calleePhone = (user: string) => answeringUas({ tag: '[pid]callee', contact: `<sip:${user}@[local_ip]:[local_port]>`, inviteTimeoutMs: 20000 });

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
  const invite = { user, domain, target, display: 'Alice', sdp: SIPP_SDP, firstCseq: 1, firstAttrs: timeSetup ? ' start_rtd="setup"' : '' };
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="caller">
${registers ? register(user, domain) : ''}
${inviteWithDigest(invite)}
<recv response="180" optional="true"/>
<recv response="200" rrs="true"${timeSetup ? ' rtd="setup"' : ''}/>
${ack(2)}
${holdMs > 0 ? `<pause milliseconds="${holdMs}"/>` : ''}
${bye(3)}
</scenario>`.replace(/PROXYPORT/g, String(proxyPort));
}
