// Long calls the flow dials (issue 52): the connect action (with the platform's dial timeout, and with
// its own ring_timeout), groupcalls (ring_all and linear) and a queue's agent (wait_timeout 1.5 s).
// CALL_DIAL_TIMEOUT_MS is 1.5 s; each answered call is held past three times the longest timer it met,
// both parties still up (rows progressing, each hears the other, no BYE), then a party hangs up and the
// records say who.
import { expect } from 'chai';
import type { CallRow } from '../../core/repos/calls';
import { agentsRepo } from '../../core/repos/agents';
import { groupcallsRepo } from '../../core/repos/groupcalls';
import { queuesRepo } from '../../core/repos/queues';
import { tagsRepo } from '../../core/repos/tags';
import { RtpParty } from '../../testkit/conference/party';
import { freePort } from '../../testkit/ports';
import { sipp, until, type SippResult } from '../../testkit/media-app/harness';
import { callUp, callWithStatus, hangupOf, legOf } from '../../testkit/long-calls/calls';
import { holdFor } from '../../testkit/long-calls/hold';
import { answerer } from '../../testkit/long-calls/parties';
import { DIAL_TIMEOUT_MS, holdPast, LONG_CALL_ENV } from '../../testkit/long-calls/timers';
import { useXferStack, cancelledUas, type Stack } from '../xfer/support';
import { hears, sippArgs } from '../pbx/support';

const [TONE_X, TONE_C] = [700, 1900];
const HOLD_MS = holdPast(DIAL_TIMEOUT_MS);
const CHECKS_MS = 2500;
const RING_MS = Math.round(DIAL_TIMEOUT_MS * 0.7);

describe('long calls: the connect action, groupcalls and a queue', function () {
  this.timeout(60_000);
  let s: Stack;
  const open = useXferStack((x) => (s = x), LONG_CALL_ENV);

  const withStatus = (id: string, status: string, what: string) => callWithStatus(s.t.ctx.db, id, status, what);
  const up = (id: string, what: string) => callUp(s.t.ctx.db, id, what);
  /** A sipp party on a port of its own running `scenario`, its audio a tone of `freq`. */
  async function party(freq: number, scenario: (rtpPort: number) => string): Promise<{ port: number; audio: RtpParty; run: { done: Promise<SippResult> } }> {
    const audio = await RtpParty.open(freq);
    open.push(audio);
    const port = await freePort();
    return { port, audio, run: sipp(scenario(audio.port), await sippArgs(port), { killAfterMs: 60_000 }) };
  }
  const ok = (r: SippResult) => expect(r.code, r.errors + r.messages.slice(-2000)).to.equal(0);

  for (const ringTimeout of [undefined, 1200]) {
    it(`connect${ringTimeout ? ` with ring_timeout ${ringTimeout} ms` : ''}: C rings past half the dial timeout, X and C held past 3× it, X hangs up`, async () => {
      const x = await party(TONE_X, (rtp) => answerer({ rtpPort: rtp, hangupAfterMs: HOLD_MS + CHECKS_MS + 2000 }));
      const c = await party(TONE_C, (rtp) => answerer({ rtpPort: rtp, ringMs: RING_MS }));
      const res = await s.api.post('/calls', {
        source: { type: 'tel', target: '+899100000002' },
        destinations: [{ type: 'sip', target: `x@127.0.0.1:${x.port}` }],
        actions: [{ type: 'connect', option: { destinations: [{ type: 'sip', target: `c@127.0.0.1:${c.port}` }], ...(ringTimeout ? { ring_timeout: ringTimeout } : {}) } }],
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const xCall = await up(res.body.calls[0].id, 'X up');
      const cLeg = await legOf(s.t.ctx.db, xCall.id, 'progressing', 'C answered');
      await holdFor(HOLD_MS, {
        db: s.t.ctx.db,
        calls: [xCall.id, cLeg.id],
        parties: [
          { name: 'X', done: x.run.done },
          { name: 'C', done: c.run.done },
        ],
      });
      await hears(x.audio, TONE_C, 'X hears C after the hold');
      await hears(c.audio, TONE_X, 'C hears X after the hold');
      const [rx, rc] = await Promise.all([x.run.done, c.run.done]);
      ok(rx);
      ok(rc);
      expect(hangupOf(await withStatus(xCall.id, 'hangup', 'X ended'))).to.deep.equal({ hangup_by: 'remote', hangup_reason: 'normal' });
      expect(hangupOf(await withStatus(cLeg.id, 'hangup', 'C ended'))).to.deep.equal({ hangup_by: 'local', hangup_reason: 'normal' });
    });
  }

  /** The groupcall's answered call, held; its callee hangs up; the groupcall ends with it. */
  async function heldGroupcall(body: Record<string, unknown>, winner: Awaited<ReturnType<typeof party>>, others: { done: Promise<SippResult> }[]) {
    const res = await s.api.post('/groupcalls', {
      source: { type: 'tel', target: '+899100000001' },
      actions: [{ type: 'echo', option: { duration: 60_000 } }],
      answer_method: 'hangup_others',
      ...body,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const answered = await until(
      async () => (await s.t.ctx.db('calls').whereIn('id', res.body.call_ids).where({ status: 'progressing' }).first()) as CallRow | undefined,
      20_000,
      'a groupcall call answered',
    );
    await until(async () => (await groupcallsRepo(s.t.ctx.db).get(res.body.id))?.answer_call_id === answered.id, 10_000, 'the groupcall’s answer is that call');
    for (const o of await Promise.all(others.map((o) => o.done))) ok(o);
    await holdFor(HOLD_MS, { db: s.t.ctx.db, calls: [answered.id], parties: [{ name: 'the callee', done: winner.run.done }] });
    await hears(winner.audio, winner.audio.freq, 'the callee hears its echo after the hold');
    ok(await winner.run.done);
    expect(hangupOf(await withStatus(answered.id, 'hangup', 'the call ended'))).to.deep.equal({ hangup_by: 'remote', hangup_reason: 'normal' });
    await until(async () => (await groupcallsRepo(s.t.ctx.db).get(res.body.id))?.status === 'hangup', 10_000, 'groupcall hangup');
  }

  it('groupcall ring_all: the answer (after ringing past half the dial timeout) is held past 3× it, its callee hangs up', async () => {
    const w = await party(TONE_C, (rtp) => answerer({ rtpPort: rtp, ringMs: RING_MS, hangupAfterMs: HOLD_MS + CHECKS_MS }));
    const lp = await freePort();
    const loser = sipp(cancelledUas(), ['-i', '127.0.0.1', '-p', String(lp), '-m', '1']);
    await heldGroupcall({ ring_method: 'ring_all', destinations: [w.port, lp].map((p, i) => ({ type: 'sip', target: `r${i}@127.0.0.1:${p}` })) }, w, [loser]);
  });

  it('groupcall linear: the first does not answer within the dial timeout, the second answers and is held past 3× it', async () => {
    const w = await party(TONE_C, (rtp) => answerer({ rtpPort: rtp, hangupAfterMs: HOLD_MS + CHECKS_MS }));
    const fp = await freePort();
    // the first only rings: the dial timeout gives it up (CANCEL)
    const first = sipp(cancelledUas(), ['-i', '127.0.0.1', '-p', String(fp), '-m', '1']);
    await heldGroupcall({ ring_method: 'linear', destinations: [fp, w.port].map((p, i) => ({ type: 'sip', target: `l${i}@127.0.0.1:${p}` })) }, w, [first]);
  });

  it('queue: the agent answers after ringing past half the dial timeout (wait_timeout 1.5 s); caller and agent held past 3× the timers, the caller hangs up', async () => {
    const db = s.t.ctx.db;
    const cid = s.f.customer.id;
    const tag = await tagsRepo(db).create(cid, { name: `long${Date.now()}` });
    if (tag === 'duplicate') throw new Error('tag exists');
    const agentParty = await party(TONE_C, (rtp) => answerer({ rtpPort: rtp, ringMs: RING_MS }));
    await agentsRepo(db).create({
      customer_id: cid,
      username: `long-agent-${Date.now()}@example.test`,
      permission: 16,
      status: 'available',
      tag_ids: [tag.id],
      addresses: [{ type: 'sip', target: `agent@127.0.0.1:${agentParty.port}` }],
    });
    // wait_timeout: armed while the caller waits, it must not end the service; no service_timeout (that one ends a service by design)
    const queue = await queuesRepo(db).create(cid, { name: 'long', tag_ids: [tag.id], wait_timeout: DIAL_TIMEOUT_MS, service_timeout: 0 });
    const callerParty = await party(TONE_X, (rtp) => answerer({ rtpPort: rtp, hangupAfterMs: HOLD_MS + CHECKS_MS + 2000 }));
    const res = await s.api.post('/calls', {
      source: { type: 'tel', target: '+899100000003' },
      destinations: [{ type: 'sip', target: `caller@127.0.0.1:${callerParty.port}` }],
      actions: [{ type: 'queue_join', option: { queue_id: queue.id } }, { type: 'hangup' }],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const callerRow = await up(res.body.calls[0].id, 'the caller up');
    const agentLeg = await legOf(db, callerRow.id, 'progressing', 'the agent answered');
    await holdFor(HOLD_MS, {
      db,
      calls: [callerRow.id, agentLeg.id],
      parties: [
        { name: 'the caller', done: callerParty.run.done },
        { name: 'the agent', done: agentParty.run.done },
      ],
    });
    await hears(callerParty.audio, TONE_C, 'the caller hears the agent after the hold');
    await hears(agentParty.audio, TONE_X, 'the agent hears the caller after the hold');
    const [rcaller, ragent] = await Promise.all([callerParty.run.done, agentParty.run.done]);
    ok(rcaller);
    ok(ragent);
    expect(hangupOf(await withStatus(callerRow.id, 'hangup', 'the caller ended'))).to.deep.equal({ hangup_by: 'remote', hangup_reason: 'normal' });
    expect(hangupOf(await withStatus(agentLeg.id, 'hangup', 'the agent ended'))).to.deep.equal({ hangup_by: 'local', hangup_reason: 'normal' });
  });
});
