// Phones of the PBX tests (park, pickup): sipp scenarios whose audio goes to an RtpParty (its own
// tone, testkit/conference/party.ts), so each leg's tones can be checked, and the platform they run on.
import { expect } from 'chai';
import { RtpParty, toneIn } from '../../testkit/conference/party';
import type { Count } from '../../testkit/count-waits';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { createExtension, killAllSipp, register, registerOnly, sipp, until, type SippResult } from '../../testkit/media-app/harness';
import { ack, ackFailure, bye, inviteWithDigest, ok200 } from '../../testkit/media-app/sipp-steps';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { startStack, type Stack } from '../xfer/support';
import { loopbackSdp } from '../../testkit/sdp';

/** SDP of a phone whose audio goes to `port` on loopback. */
export const sdpTo = (port: number) => loopbackSdp(port, { direction: null });

/**
 * A registered phone calls `target` (its audio at rtpPort). With `hangupAfterMs` it hangs up then;
 * else it waits for the platform's BYE. `expect180` makes the 180 required (a ringing callee).
 */
export function caller(o: { user: string; domain: string; target: string; rtpPort: number; hangupAfterMs?: number; byeTimeoutMs?: number }): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="caller">
${register(o.user, o.domain)}
${inviteWithDigest({ user: o.user, domain: o.domain, target: o.target, display: 'Desk', sdp: sdpTo(o.rtpPort), firstCseq: 1, ackVia: 'new' })}
<recv response="180" optional="true"/>
<recv response="183" optional="true"/>
<recv response="200" rrs="true" timeout="30000"/>
${ack(2)}
${o.hangupAfterMs !== undefined ? `<pause milliseconds="${o.hangupAfterMs}"/>\n${bye(3)}` : `<recv request="BYE" timeout="${o.byeTimeoutMs ?? 60000}"/>\n${ok200}`}
</scenario>`;
}

/** A registered phone calls `target` and is refused with `status` (and this reason phrase) before any answer; `rings`: a 180 may come first. */
export function refusedCaller(o: { user: string; domain: string; target: string; status: number; phrase: string; rings?: boolean }): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="refused">
${register(o.user, o.domain)}
${inviteWithDigest({ user: o.user, domain: o.domain, target: o.target, display: 'Desk', sdp: sdpTo(9), firstCseq: 1, ackVia: 'new' })}${o.rings ? '\n<recv response="180" optional="true"/>' : ''}
<recv response="${o.status}"><action><ereg regexp="SIP/2.0 ${o.status} ${o.phrase}" search_in="msg" check_it="true" assign_to="line"/><log message="[$line]"/></action></recv>
${ackFailure(`sip:${o.target}@${o.domain}`, 2, 'new')}
</scenario>`;
}

export const sippArgs = async (port: number, timeoutS = 90) => ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', `${timeoutS}s`, '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())];

export interface Phone {
  user: string;
  domain: string;
  password: string;
  extension: string;
  id: string;
  /** Where the phone takes calls (registered there). */
  port: number;
  /** Its audio: a tone of its own. */
  audio: RtpParty;
}

/** An extension of the customer with its phone registered at a port of its own, speaking `freq`. */
export async function phone(s: Stack, customerId: string, freq: number, o: { extension?: string } = {}): Promise<Phone> {
  const e = await createExtension(customerId, o);
  const port = await freePort();
  const reg = await sipp(registerOnly(e.ext.username, e.domain), [`127.0.0.1:${s.p.sipPort}`, '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-au', e.ext.username, '-ap', e.password]).done;
  expect(reg.code, reg.errors).to.equal(0);
  return { user: e.ext.username, domain: e.domain, password: e.password, extension: e.ext.extension, id: e.ext.id, port, audio: await RtpParty.open(freq) };
}

/**
 * Mocha hooks: the transfer stack (xfer/support) started before the suite, with every sipp killed, the
 * phones' audio closed and the stack closed after it; `set` receives the stack once up. `newPhone` makes
 * a phone of the stack's customer that the suite closes (as it does whatever else is put in `phones`).
 */
export function usePhoneStack(set: (s: Stack) => void, opts: { mediaServer?: 'embedded' | 'fsmrf' } = {}): { newPhone: (freq: number) => Promise<Phone>; phones: Phone[] } {
  let s: Stack | undefined;
  const phones: Phone[] = [];
  before(async () => {
    s = await startStack({}, opts);
    set(s);
  });
  after(async () => {
    killAllSipp();
    for (const p of phones) p.audio.close();
    await s?.close();
  });
  const newPhone = async (freq: number) => {
    const p = await phone(s!, s!.f.customer.id, freq);
    phones.push(p);
    return p;
  };
  return { newPhone, phones };
}

/** Runs a scenario as the phone's caller side (credentials for the digest). */
export async function call(s: Stack, p: Phone, scenario: string): Promise<{ done: Promise<SippResult> }> {
  const port = await freePort();
  return sipp(scenario, [`127.0.0.1:${s.p.sipPort}`, ...(await sippArgs(port)), '-au', p.user, '-ap', p.password], { killAfterMs: 100_000 });
}

/** Runs a scenario on the phone's registered port (it takes calls there). */
export async function answerOn(p: Phone, scenario: string): Promise<{ done: Promise<SippResult> }> {
  return sipp(scenario, await sippArgs(p.port), { killAfterMs: 100_000 });
}

/** The customer's call whose row matches, once it has this status. */
export function callWhere(s: Stack, where: Partial<Pick<CallRow, 'customer_id' | 'direction'>> & { to?: string; from?: string }, status: string, what: string): Promise<CallRow> {
  return until(
    async () => {
      const rows = (await s.t.ctx.db('calls').where({ customer_id: where.customer_id, ...(where.direction ? { direction: where.direction } : {}) })) as CallRow[];
      const r = rows.find((c) => (!where.to || c.destination.target === where.to) && (!where.from || c.source.target === where.from) && c.status === status);
      return r ? ((await callsRepo(s.t.ctx.db).get(r.id)) ?? null) : null;
    },
    30_000,
    what,
  );
}

/** Waits until `party` has heard `freq` in at least `share` of the frames of the last `windowMs`. */
export async function hears(party: RtpParty, freq: number, what: string, o: { windowMs?: number; share?: number; timeoutMs?: number } = {}): Promise<void> {
  const windowMs = o.windowMs ?? 600;
  await until(() => Date.now() - windowMs > 0 && party.framesBetween(Date.now() - windowMs) > 10 && party.presence(freq, Date.now() - windowMs) >= (o.share ?? 0.6), o.timeoutMs ?? 15_000, what);
}

/** Fraction of the frames of the last `windowMs` that carried `freq`. */
export const shareOf = (party: RtpParty, freq: number, windowMs = 800) => party.presence(freq, Date.now() - windowMs);

/** The frames `party` has heard that `match`, counted as they come: a count for testkit/count-waits. */
export function framesMatching(party: RtpParty, match: (pcm: Int16Array) => boolean): Count {
  let [i, n] = [0, 0];
  return () => {
    for (const h = party.heard; i < h.length; i++) if (match(h[i]!.pcm)) n++;
    return n;
  };
}

/** The frames `party` has heard that carry `freq` (framesMatching). */
export const framesWith = (party: RtpParty, freq: number): Count => framesMatching(party, (pcm) => toneIn(pcm, 0, pcm.length, freq));
