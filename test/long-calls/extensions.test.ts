// Long calls between extensions and to extensions and SIP URIs (issue 52): with CALL_DIAL_TIMEOUT_MS
// at 1.5 s, an answered call is held past three times that, both parties still up (rows progressing,
// each hears the other's tone, no BYE), and then a party hangs up and the records say who. Also a
// callee that answers after ringing longer than half the dial timeout, then held past it.
import { expect } from 'chai';
import type { CallRow } from '../../core/repos/calls';
import { RtpParty } from '../../testkit/conference/party';
import { freePort } from '../../testkit/ports';
import { sipp, until, type SippResult } from '../../testkit/media-app/harness';
import { callUp, callWithStatus } from '../../testkit/long-calls/calls';
import { holdFor } from '../../testkit/long-calls/hold';
import { answerer } from '../../testkit/long-calls/parties';
import { DIAL_TIMEOUT_MS, holdPast, LONG_CALL_ENV } from '../../testkit/long-calls/timers';
import { useXferStack, type Stack } from '../xfer/support';
import { answerOn, call, caller, hears, phone, sippArgs, type Phone } from '../pbx/support';

const [TONE_A, TONE_B] = [400, 1600];
const HOLD_MS = holdPast(DIAL_TIMEOUT_MS);
/** After the hold: time for the checks before the party's scheduled BYE. */
const CHECKS_MS = 2500;

describe('long calls: extensions, REST calls to an extension and to a SIP URI', function () {
  this.timeout(60_000);
  let s: Stack;
  let cid: string;
  const open = useXferStack((x) => ((s = x), (cid = x.f.customer.id)), LONG_CALL_ENV);

  const newPhone = async (freq: number) => {
    const p = await phone(s, cid, freq);
    open.push(p.audio);
    return p;
  };
  const withStatus = (id: string, status: string, what: string) => callWithStatus(s.t.ctx.db, id, status, what);
  const up = (id: string, what: string) => callUp(s.t.ctx.db, id, what);
  /** A's call to B's extension, once both sides are up. */
  const extCall = async (a: Phone, b: Phone) => {
    const leg = await until(
      async () => (await s.t.ctx.db('calls').where({ customer_id: cid, direction: 'outgoing' }).whereRaw("destination->>'target' = ?", [b.extension]).first()) as CallRow | undefined,
      20_000,
      'B’s leg',
    );
    await up(leg.id, 'B answered');
    const master = await up(leg.master_call_id, 'A’s call up');
    return { leg, master };
  };

  /** A's call to B, held past the dial timeout with both phones up; each hears the other after it; both phones' results. */
  async function heldBothWays(a: Phone, b: Phone, aPhone: { done: Promise<SippResult> }, bPhone: { done: Promise<SippResult> }) {
    const { leg, master } = await extCall(a, b);
    await holdFor(HOLD_MS, {
      db: s.t.ctx.db,
      calls: [master.id, leg.id],
      parties: [
        { name: 'A’s phone', done: aPhone.done },
        { name: 'B’s phone', done: bPhone.done },
      ],
    });
    await hears(a.audio, TONE_B, 'A hears B after the hold');
    await hears(b.audio, TONE_A, 'B hears A after the hold');
    const [ra, rb] = await Promise.all([aPhone.done, bPhone.done]);
    return { leg, master, ra, rb };
  }

  it('extension → extension: held past 3× the dial timeout, both hear each other; A hangs up, the records say A', async () => {
    const [a, b] = [await newPhone(TONE_A), await newPhone(TONE_B)];
    const bPhone = await answerOn(b, answerer({ rtpPort: b.audio.port, user: b.user }));
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port, hangupAfterMs: HOLD_MS + CHECKS_MS }));
    const { leg, master, ra, rb } = await heldBothWays(a, b, aPhone, bPhone);
    expect(ra.code, ra.errors + ra.messages.slice(-2000)).to.equal(0);
    expect(rb.code, rb.errors + rb.messages.slice(-2000)).to.equal(0);
    expect(await withStatus(master.id, 'hangup', 'A’s call ended')).to.include({ hangup_by: 'remote', hangup_reason: 'normal' });
    expect(await withStatus(leg.id, 'hangup', 'B’s leg ended')).to.include({ hangup_by: 'local', hangup_reason: 'normal' });
  });

  it('extension → extension: B rings longer than half the dial timeout, answers, is held past the timeout and hangs up itself', async () => {
    const [a, b] = [await newPhone(TONE_A), await newPhone(TONE_B)];
    const ringMs = Math.round(DIAL_TIMEOUT_MS * 0.7);
    const bPhone = await answerOn(b, answerer({ rtpPort: b.audio.port, user: b.user, ringMs, hangupAfterMs: HOLD_MS + CHECKS_MS }));
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port, byeTimeoutMs: 60_000 }));
    const { leg, master, ra, rb } = await heldBothWays(a, b, aPhone, bPhone);
    expect(rb.code, rb.errors + rb.messages.slice(-2000)).to.equal(0);
    expect(ra.code, ra.errors + ra.messages.slice(-2000)).to.equal(0);
    expect(await withStatus(leg.id, 'hangup', 'B’s leg ended')).to.include({ hangup_by: 'remote', hangup_reason: 'normal' });
    expect(await withStatus(master.id, 'hangup', 'A’s call ended')).to.include({ hangup_by: 'local', hangup_reason: 'normal' });
  });

  /** POST /calls to `destination` whose flow echoes the callee; the callee (answering `scenario` at `port`) is held, then hangs up. */
  async function restCall(destination: { type: string; target: string }, party: RtpParty, answering: { done: Promise<SippResult> }) {
    const res = await s.api.post('/calls', { source: { type: 'tel', target: '+899100000001' }, destinations: [destination], actions: [{ type: 'echo', option: { duration: 60_000 } }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const id = res.body.calls[0].id as string;
    await up(id, 'the callee answered');
    await holdFor(HOLD_MS, { db: s.t.ctx.db, calls: [id], parties: [{ name: 'the callee', done: answering.done }] });
    // the echo: the callee hears its own tone back, so RTP flows both ways
    await hears(party, party.freq, 'the callee hears its echo after the hold');
    const r = await answering.done;
    expect(r.code, r.errors + r.messages.slice(-2000)).to.equal(0);
    expect(await withStatus(id, 'hangup', 'the call ended')).to.include({ hangup_by: 'remote', hangup_reason: 'normal' });
  }

  it('POST /calls to an extension: answered after ringing past half the dial timeout, held past it, the callee hangs up', async () => {
    const b = await newPhone(TONE_B);
    const answering = await answerOn(b, answerer({ rtpPort: b.audio.port, user: b.user, ringMs: Math.round(DIAL_TIMEOUT_MS * 0.7), hangupAfterMs: HOLD_MS + CHECKS_MS }));
    await restCall({ type: 'extension', target: b.extension }, b.audio, answering);
  });

  it('POST /calls to a SIP URI: held past 3× the dial timeout, the callee hangs up', async () => {
    const audio = await RtpParty.open(TONE_B);
    open.push(audio);
    const port = await freePort();
    const answering = sipp(answerer({ rtpPort: audio.port, hangupAfterMs: HOLD_MS + CHECKS_MS }), await sippArgs(port), { killAfterMs: 60_000 });
    await restCall({ type: 'sip', target: `uri@127.0.0.1:${port}` }, audio, answering);
  });
});
