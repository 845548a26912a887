// sipp phones for extension calls: a caller that registers and calls with digest, a callee that answers;
// and a trunk caller (trusted by address) that waits for the platform's BYE.
import { freePort, sippMediaPort, udpBound } from '../ports';
import { answeringUas, register, registerOnly, sipp, SIPP_SDP, uacWaitsForBye, type SippResult } from './harness';
import { ack, bye, inviteWithDigest } from './sipp-steps';

/** A sipp party the platform calls (`scenario`, one call on a free port of 127.0.0.1, 90 s at the most): its port once sipp listens there. */
export async function sippParty(scenario: string): Promise<{ port: number; x: ReturnType<typeof sipp> }> {
  const port = await freePort();
  const x = sipp(scenario, ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', '90s'], { killAfterMs: 100_000 });
  await udpBound(port);
  return { port, x };
}

/**
 * A trunk caller (sipp on 127.0.0.1, its media on a port of its own) calling `number` at the platform's
 * `sipPort`: it sends its audio to and hears at `rtpPort`, and waits up to `byeTimeoutMs` for the BYE.
 */
export async function trunkCaller(number: string, sipPort: number, rtpPort: number, byeTimeoutMs: number): Promise<ReturnType<typeof sipp>> {
  return sipp(uacWaitsForBye(`${number}@127.0.0.1:${sipPort}`, 'caller', rtpPort, { byeTimeoutMs }), [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mp', String(await sippMediaPort())]);
}

/**
 * sipp registers the extension `who` at `server` (host:port) from `host`:`port` with its password
 * (`scenario`: another REGISTER, such as one with Expires: 0); the run's result.
 */
export function registerPhone(
  server: string,
  who: { ext: { username: string }; domain: string; password: string },
  host: string,
  port: number,
  scenario = registerOnly(who.ext.username, who.domain),
): Promise<SippResult> {
  return sipp(scenario, [server, '-i', host, '-p', String(port), '-m', '1', '-au', who.ext.username, '-ap', who.password]).done;
}

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

type Extension = { ext: { username: string; extension: string }; domain: string; password: string };

/**
 * Extension `a` (a callerPhone through `server`, the platform's SIP address) calls extension `b`, whose
 * phone registered from `phonePort` on `phoneIp` answers there (calleePhone, its port bound before the
 * call); resolves with the caller's and the callee's sipp results.
 */
export async function extensionCall(
  a: Extension,
  b: Extension,
  server: string,
  sipPort: number,
  phonePort: number,
  opts: { phoneIp?: string; killAfterMs?: number } = {},
): Promise<[SippResult, SippResult]> {
  const ip = opts.phoneIp ?? '127.0.0.1';
  const killAfterMs = opts.killAfterMs ?? 40_000;
  const callee = await answeringPhone(b, phonePort, { ip, killAfterMs });
  await udpBound(phonePort); // the UAS bound its port: the INVITE waits in its socket
  const caller = sipp(callerPhone(a.ext.username, a.domain, b.ext.extension, sipPort), await callerArgs(server, a), { killAfterMs });
  return Promise.all([caller.done, callee.done]);
}

/** The phone of `e`, registered from `port` on `ip` (127.0.0.1 unless told), answering one call there (calleePhone). */
export async function answeringPhone(e: Extension, port: number, opts: { ip?: string; killAfterMs?: number } = {}) {
  const ip = opts.ip ?? '127.0.0.1';
  return sipp(calleePhone(e.ext.username), ['-i', ip, '-p', String(port), '-m', '1', '-mi', ip, '-mp', String(await sippMediaPort())], { killAfterMs: opts.killAfterMs ?? 40_000 });
}

/** sipp's arguments for a phone of `e` calling through `server` (address:port) with its digest credentials and RTP on a media port. */
export async function callerArgs(server: string, e: Extension): Promise<string[]> {
  return [server, '-i', '127.0.0.1', '-m', '1', '-au', e.ext.username, '-ap', e.password, '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())];
}

/** sipp's arguments for a phone of `e` on a port of its own placing a call that is refused (no media) through `server`. */
export async function refusedCallerArgs(server: string, e: Extension): Promise<string[]> {
  return [server, '-i', '127.0.0.1', '-p', String(await freePort()), '-m', '1', '-au', e.ext.username, '-ap', e.password];
}
