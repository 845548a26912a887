// The Bridge (media-app/call/bridge.ts): its move table, and with real calls (sipp parties whose RTP
// is a TonePeer that speaks and counts what it hears) open/other/pause/resume/replace, the rule for
// the side that stays when one leaves (and the Reason a side that died leaves it), and the refusals.
import { expect } from 'chai';
import { Bridge, BridgeError, BRIDGE_MOVES, canMoveBridge, type BridgeState } from '../../media-app/call/bridge';
import type { CallSession } from '../../media-app/call/session';
import { callsRepo } from '../../core/repos/calls';
import { freePort, udpBound } from '../../testkit/ports';
import { sipp, sleep, until, type SippResult } from '../../testkit/media-app/harness';
import { party, TonePeer, type Stack, useXferStack } from '../xfer/support';
import { mediaTimedOut } from '../../media-app/call/dead-party';
import { receivedRequests } from '../../testkit/long-calls/dead-parties';

/** The BYE's Reason of a party that died of silence (media-app/call/dead-party.ts). */
const MEDIA_TIMEOUT_REASON = /^Reason:\s*SIP;cause=408;text="Media timeout"\s*$/im;

describe('Bridge move table', () => {
  it('allows exactly the declared moves; closed is final', () => {
    const states = Object.keys(BRIDGE_MOVES) as BridgeState[];
    const allowed = states.flatMap((f) => states.filter((t) => canMoveBridge(f, t)).map((t) => `${f}>${t}`));
    expect(allowed.sort()).to.deep.equal(
      ['idle>open', 'idle>closed', 'open>open', 'open>paused', 'open>closed', 'paused>paused', 'paused>open', 'paused>consulting', 'paused>closed', 'consulting>open', 'consulting>closed'].sort(),
    );
    for (const t of states) expect(canMoveBridge('closed', t), `closed>${t}`).to.equal(false);
    expect(canMoveBridge('open', 'consulting'), 'a consultation starts from a pause').to.equal(false);
  });
});

describe('Bridge with real calls', function () {
  this.timeout(90_000);
  let s: Stack;
  const open = useXferStack((x) => (s = x));

  /** A call the platform makes to a sipp party (its RTP a TonePeer), up and idle in a long sleep. */
  async function upCall(): Promise<{ call: CallSession; tone: TonePeer; sipp: { done: Promise<SippResult> } }> {
    const tone = await TonePeer.open();
    open.push(tone);
    const port = await freePort();
    const sp = sipp(party({ rtpPort: tone.port, byeTimeoutMs: 60_000 }), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', '70s'], { killAfterMs: 75_000 });
    await udpBound(port); // the party has bound its port: the INVITE waits in its socket
    const res = await s.api.post('/calls', {
      source: { type: 'tel', target: '+899100000002' },
      destinations: [{ type: 'sip', target: `p@127.0.0.1:${port}` }],
      actions: [{ type: 'sleep', option: { duration: 60_000 } }],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const id = res.body.calls[0].id as string;
    const call = await until(
      () => {
        const c = s.p.app.factory.get(id);
        return c && c.status === 'progressing' && c.endpoint ? c : null;
      },
      20_000,
      'call up',
    );
    // its tone goes to this call's leg, not to whoever reached its port first (test/xfer/tone-peer.test.ts)
    tone.talkTo(call.endpoint!.local.port);
    return { call, tone, sipp: sp };
  }

  /** `tone` hears speech now (more than `n` voiced packets within the next few seconds). */
  const hears = (tone: TonePeer, what: string, n = 20) => {
    const from = tone.voiced;
    return until(() => tone.voiced - from > n, 8000, what);
  };
  /** `tone` hears (almost) nothing for 600 ms. */
  async function silent(tone: TonePeer, what: string): Promise<void> {
    await sleep(200);
    const from = tone.voiced;
    await sleep(600);
    expect(tone.voiced - from, what).to.be.lessThan(5);
  }

  it('open, other, pause, resume, replace: media follows each move; the replaced call is handed off', async () => {
    const [p, q, r] = [await upCall(), await upCall(), await upCall()];
    const br = await Bridge.open(p.call, q.call, { kind: 'return_to_flow', owner: p.call });
    expect(br.state).to.equal('open');
    expect(p.call.bridge).to.equal(br);
    expect(q.call.bridge).to.equal(br);
    expect(br.other(p.call)).to.equal(q.call);
    expect(br.other(r.call)).to.equal(null);
    await Promise.all([hears(p.tone, 'P hears Q'), hears(q.tone, 'Q hears P')]);

    // refusals leave it as it was
    await expectBridgeError(Bridge.open(p.call, r.call, { kind: 'hangup_other' }), /bridged already/);
    await expectBridgeError(br.resume(), /only a paused bridge resumes/);
    await expectBridgeError(br.replace(r.call, q.call), /not a side/);
    expect(br.state).to.equal('open');

    await br.pause('hold');
    expect(br.state).to.equal('paused');
    expect(br.pauseReason).to.equal('hold');
    await Promise.all([silent(p.tone, 'P hears nothing while paused'), silent(q.tone, 'Q hears nothing while paused')]);
    await br.resume();
    await hears(p.tone, 'P hears Q again');

    await br.replace(q.call, r.call);
    expect(br.parties.b).to.equal(r.call);
    expect(q.call.bridge, 'Q left the bridge').to.equal(null);
    expect(q.call.handedOff).to.equal(true);
    expect(r.call.bridge).to.equal(br);
    await Promise.all([hears(r.tone, 'R hears P'), silent(q.tone, 'Q hears P no more')]);
    // the handed-off call's end is not a leave of the bridge
    await q.call.hangup();
    await sleep(300);
    expect(br.state).to.equal('open');

    // the replaced side was not the owner: P's rule still returns P to its flow when R leaves
    await r.call.hangup();
    const end = await br.ended;
    expect(end).to.include({ why: 'left', slot: 'b', survivor: 'returned' });
    expect(p.call.isEnded).to.equal(false);
    expect(p.call.bridge).to.equal(null);
    await p.call.hangup();
    for (const x of [p, q, r]) expect((await x.sipp.done).code).to.equal(0);
  });

  it('return_to_flow: the owner leaving hangs up the other side; hangup_other: either leaving hangs up the other', async () => {
    const [p, q, r, t] = [await upCall(), await upCall(), await upCall(), await upCall()];
    const owned = await Bridge.open(p.call, q.call, { kind: 'return_to_flow', owner: p.call });
    await p.call.hangup();
    const e1 = await owned.ended;
    expect(e1).to.include({ why: 'left', slot: 'a', survivor: 'hung_up' });
    expect(q.call.isEnded).to.equal(true);
    expect(await callsRepo(s.t.ctx.db).get(q.call.id)).to.include({ status: 'hangup', hangup_by: 'local' });

    const pair = await Bridge.open(r.call, t.call, { kind: 'hangup_other' });
    await t.call.hangup();
    const e2 = await pair.ended;
    expect(e2).to.include({ why: 'left', slot: 'b', survivor: 'hung_up' });
    expect(r.call.isEnded).to.equal(true);
    for (const x of [p, q, r, t]) expect((await x.sipp.done).code).to.equal(0);
  });

  it('a side that dies tells the other its Reason: hangup_other hangs it up with it; a returned owner ends with it unless bridged again', async () => {
    const died = () => mediaTimedOut({ silentMs: 1500 });
    const byeTo = async (x: { sipp: { done: Promise<SippResult> } }) => {
      const r = await x.sipp.done;
      expect(r.code, r.errors).to.equal(0);
      return receivedRequests(r.messages, 'BYE')[0] ?? '';
    };
    const [r, t] = [await upCall(), await upCall()];
    const pair = await Bridge.open(r.call, t.call, { kind: 'hangup_other' });
    await t.call.close(died());
    expect(await pair.ended).to.include({ why: 'left', slot: 'b', survivor: 'hung_up' });
    expect(await byeTo(r), 'hung up by the rule: its BYE says why').to.match(MEDIA_TIMEOUT_REASON);

    const [p, q] = [await upCall(), await upCall()];
    const owned = await Bridge.open(p.call, q.call, { kind: 'return_to_flow', owner: p.call });
    await q.call.close(died());
    expect(await owned.ended).to.include({ survivor: 'returned' });
    expect(p.call.isEnded, 'the owner stays up').to.equal(false);
    await p.call.hangup();
    expect(await byeTo(p), 'the owner’s next end carries its dead peer’s Reason').to.match(MEDIA_TIMEOUT_REASON);

    const [o, d, n] = [await upCall(), await upCall(), await upCall()];
    const first = await Bridge.open(o.call, d.call, { kind: 'return_to_flow', owner: o.call });
    await d.call.close(died());
    await first.ended;
    const again = await Bridge.open(o.call, n.call, { kind: 'return_to_flow', owner: o.call });
    await again.close();
    await o.call.hangup();
    expect(await byeTo(o), 'bridged again since: its end is its own').to.not.match(/^Reason:/im);
    await n.call.hangup();
  });

  it('return_both: either side leaving unlinks the other, whose flow goes on (a <Dial><Queue> dequeue)', async () => {
    const [p, q, r] = [await upCall(), await upCall(), await upCall()];
    const first = await Bridge.open(p.call, q.call, { kind: 'return_both' });
    await q.call.hangup();
    expect(await first.ended).to.include({ why: 'left', slot: 'b', survivor: 'returned' });
    expect(p.call.isEnded, 'a stays up').to.equal(false);
    const second = await Bridge.open(p.call, r.call, { kind: 'return_both' });
    await hears(r.tone, 'linked again');
    await p.call.hangup();
    expect(await second.ended).to.include({ why: 'left', slot: 'a', survivor: 'returned' });
    expect(r.call.isEnded, 'b stays up').to.equal(false);
    await r.call.hangup();
    for (const x of [p, q, r]) expect((await x.sipp.done).code).to.equal(0);
  });

  it('a paused bridge consults a third call: the consulting side leaving completes it, the target leaving gives the waiting side back', async () => {
    const [x, a, c, c2] = [await upCall(), await upCall(), await upCall(), await upCall()];
    const br = await Bridge.open(x.call, a.call, { kind: 'return_to_flow', owner: x.call });
    await expectBridgeError(br.consult(a.call, c.call), /refused/);
    await br.pause('consult');
    const first = await br.consult(a.call, c.call);
    expect(br.state).to.equal('consulting');
    expect(c.call.bridge).to.equal(br);
    expect(br.other(c.call)).to.equal(a.call);
    await Promise.all([hears(c.tone, 'C hears A'), silent(x.tone, 'X waits')]);
    // the target leaves: A gets X back
    await c.call.hangup();
    expect(await first.ended).to.equal('target_left');
    expect(br.state).to.equal('open');
    await hears(x.tone, 'X hears A again');

    await br.pause('consult');
    const second = await br.consult(a.call, c2.call);
    await a.call.hangup();
    expect(await second.ended).to.equal('complete');
    expect(br.parties.b).to.equal(c2.call);
    expect(a.call.handedOff).to.equal(true);
    await Promise.all([hears(x.tone, 'X hears C2'), hears(c2.tone, 'C2 hears X')]);
    await x.call.hangup();
    expect(await br.ended).to.include({ why: 'left', slot: 'a', survivor: 'hung_up' });
    expect(c2.call.isEnded).to.equal(true);
    for (const p of [x, a, c, c2]) expect((await p.sipp.done).code).to.equal(0);
  });

  it('refuses an ended call and a call bridged to itself', async () => {
    const p = await upCall();
    await expectBridgeError(Bridge.open(p.call, p.call, { kind: 'hangup_other' }), /itself/);
    await p.call.hangup();
    const q = await upCall();
    await expectBridgeError(Bridge.open(q.call, p.call, { kind: 'hangup_other' }), /has ended/);
    expect(q.call.bridge).to.equal(null);
    await q.call.hangup();
  });
});

async function expectBridgeError(p: Promise<unknown>, msg: RegExp): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).to.be.instanceOf(BridgeError);
  expect((err as Error).message).to.match(msg);
}
