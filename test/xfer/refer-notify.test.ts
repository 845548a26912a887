// REFER as real phones do it (issue #32 item 4): the target is dialled at once, whatever the phone does
// with the NOTIFYs (never answers them, answers 481); both original parties leaving while the target
// rings cancels it; a failed transfer says why (typed fail_reason) in its event and to the flow; bad
// REFERs are refused and lose nothing.
// X is a sipp party the platform called, connected by its flow to A (the transferor's phone, sipp);
// C is the target (sipp).
import { expect } from 'chai';
import { callsRepo } from '../../core/repos/calls';
import { transfersRepo } from '../../core/repos/transfers';
import { TRANSFER_FAIL_REASONS } from '../../core/transfers/model';
import { eventsFor, sleep, until } from '../../testkit/media-app/harness';
import { cancelledUas, party, type Stack, useXferStack } from './support';
import { answersThenByeWithReason, badReferrer, busyUas, connectedPair, referrer, traceTime } from './referrer';

describe('REFER: NOTIFYs beside the transfer, typed failures', function () {
  this.timeout(150_000);
  let s: Stack;
  const open = useXferStack((x) => (s = x));

  const transferOf = (aLegId: string, status: string) =>
    until(
      async () => {
        const row = (await s.t.ctx.db('transfers').where({ transferer_call_id: aLegId }).first()) as { id: string } | undefined;
        const r = row ? await transfersRepo(s.t.ctx.db).get(row.id) : null;
        return r && r.status === status ? r : null;
      },
      45_000,
      `transfer ${status}`,
    );

  const transferEvents = async (id: string) => (await eventsFor(s.p.redis, id)).filter((e) => e.event_type.startsWith('transfer_'));

  it('a transferor that never answers NOTIFY: the target is dialled within ~1 s of the REFER, not after 32 s', async () => {
    const { a, c, x, xCall, aRow, sinkX } = await connectedPair(
      s,
      open,
      (rtp, pc) => referrer({ rtpPort: rtp, referTo: `sip:c@127.0.0.1:${pc}`, notify: 'silent' }),
      (tone) => party({ rtpPort: tone, byeTimeoutMs: 60_000 }),
    );
    const t = await transferOf(aRow.id, 'done');
    await until(() => sinkX.voiced > 25, 10_000, 'X hears C');
    // A is released (BYE) although it never answered the NOTIFYs
    const ra = await a.done;
    expect(ra.code, ra.errors + ra.messages.slice(-3000)).to.equal(0);
    expect((await callsRepo(s.t.ctx.db).get(aRow.id))!.status).to.equal('hangup');
    expect((await transferEvents(t.id)).map((e) => [e.event_type, e.data.fail_reason])).to.deep.equal([['transfer_done', '']]);
    expect((await s.api.post(`/calls/${xCall.id}/hangup`, undefined)).status).to.equal(200);
    const [rx, rc] = await Promise.all([x.done, c.done]);
    expect(rx.code, rx.errors).to.equal(0);
    expect(rc.code, rc.errors).to.equal(0);
    const referAt = traceTime(ra.messages, 'sent', 'REFER ');
    const inviteAt = traceTime(rc.messages, 'received', 'INVITE ');
    expect(inviteAt - referAt, 'ms from the REFER to the target’s INVITE').to.be.within(0, 1500);
  });

  it('a transferor that answers the NOTIFY 481: the transfer goes on, no further NOTIFY, A gets its BYE', async () => {
    const { a, c, x, xCall, aRow, sinkX } = await connectedPair(
      s,
      open,
      (rtp, pc) => referrer({ rtpPort: rtp, referTo: `sip:c@127.0.0.1:${pc}`, notify: '481' }),
      (tone) => party({ rtpPort: tone, byeTimeoutMs: 60_000 }),
    );
    const t = await transferOf(aRow.id, 'done');
    await until(() => sinkX.voiced > 25, 10_000, 'X hears C');
    const ra = await a.done;
    expect(ra.code, ra.errors + ra.messages.slice(-3000)).to.equal(0);
    // the subscription ended with the 481: one NOTIFY only
    expect(ra.messages.match(/^NOTIFY /gm) ?? []).to.have.length(1);
    expect(t.transferee_call_id).to.not.equal('00000000-0000-0000-0000-000000000000');
    expect((await s.api.post(`/calls/${xCall.id}/hangup`, undefined)).status).to.equal(200);
    const [rx, rc] = await Promise.all([x.done, c.done]);
    expect(rx.code, rx.errors).to.equal(0);
    expect(rc.code, rc.errors).to.equal(0);
  });

  it('both original parties hang up while the target rings: the target gets CANCEL, the failure is both_parties_gone', async () => {
    const { a, c, x, xCall, aRow } = await connectedPair(
      s,
      open,
      (rtp, pc) => referrer({ rtpPort: rtp, referTo: `sip:c@127.0.0.1:${pc}`, notify: 'ok' }),
      () => cancelledUas(),
    );
    // C rings
    const target = await until(
      async () => {
        const t = (await s.t.ctx.db('transfers').where({ transferer_call_id: aRow.id }).first()) as { id: string; groupcall_id: string } | undefined;
        if (!t) return null;
        const leg = await s.t.ctx.db('calls').where({ groupcall_id: t.groupcall_id }).first();
        return leg?.status === 'ringing' ? { t, leg } : null;
      },
      20_000,
      'the target ringing',
    );
    // X hangs up (the API); A, X's connected leg, goes with it
    expect((await s.api.post(`/calls/${xCall.id}/hangup`, undefined)).status).to.equal(200);
    const [ra, rx, rc] = await Promise.all([a.done, x.done, c.done]);
    expect(ra.code, ra.errors + ra.messages.slice(-3000)).to.equal(0);
    expect(rx.code, rx.errors).to.equal(0);
    expect(rc.code, 'the target was cancelled: ' + rc.errors + rc.messages.slice(-3000)).to.equal(0);
    const t = await transferOf(aRow.id, 'failed');
    const events = await transferEvents(t.id);
    expect(events.map((e) => [e.event_type, e.data.fail_reason, e.data.status])).to.deep.equal([['transfer_failed', 'both_parties_gone', 'failed']]);
    await until(async () => (await callsRepo(s.t.ctx.db).get(target.leg.id))?.status === 'hangup', 10_000, 'target call ended');
    expect((await callsRepo(s.t.ctx.db).get(target.leg.id))!.hangup_reason).to.equal('cancel');
  });

  it('both original parties gone while the answered target is consulted: the target gets a BYE with a Reason', async () => {
    const { a, c, x, xCall, aRow, cPort } = await connectedPair(
      s,
      open,
      (rtp) => party({ rtpPort: rtp, byeTimeoutMs: 60_000 }),
      (tone) => answersThenByeWithReason(tone, 'SIP;cause=487;text=.transfer failed: both_parties_gone.'),
    );
    const res = await s.api.post('/transfers', { transfer_type: 'attended', transferer_call_id: aRow.id, transferee_addresses: [{ type: 'sip', target: `c@127.0.0.1:${cPort}` }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await until(async () => (await transfersRepo(s.t.ctx.db).get(res.body.id))?.status === 'consulting', 20_000, 'consulting');
    // X hangs up; A, its connected leg, goes with it: nobody is left for C
    expect((await s.api.post(`/calls/${xCall.id}/hangup`, undefined)).status).to.equal(200);
    const [ra, rx, rc] = await Promise.all([a.done, x.done, c.done]);
    expect(ra.code, ra.errors).to.equal(0);
    expect(rx.code, rx.errors).to.equal(0);
    expect(rc.code, 'C got a BYE with the Reason: ' + rc.errors + rc.messages.slice(-3000)).to.equal(0);
    await until(async () => (await transfersRepo(s.t.ctx.db).get(res.body.id))?.status === 'failed', 10_000, 'failed');
    expect((await transferEvents(res.body.id)).map((e) => [e.event_type, e.data.fail_reason])).to.deep.equal([['transfer_failed', 'both_parties_gone']]);
  });

  it('a busy target: the final NOTIFY carries 486, the event and the flow get target_busy, the original pair stays', async () => {
    const { a, x, xCall, aRow, c } = await connectedPair(
      s,
      open,
      (rtp, pc) => party({ rtpPort: rtp, referTo: `sip:c@127.0.0.1:${pc}`, referFails: true, byeTimeoutMs: 40_000 }),
      () => busyUas(),
    );
    const t = await transferOf(aRow.id, 'failed');
    const events = await transferEvents(t.id);
    expect(events.map((e) => [e.event_type, e.data.fail_reason])).to.deep.equal([['transfer_failed', 'target_busy']]);
    expect(TRANSFER_FAIL_REASONS).to.include(events[0]!.data.fail_reason);
    expect((await callsRepo(s.t.ctx.db).get(xCall.id))!.status).to.equal('progressing');
    expect((await s.api.post(`/calls/${xCall.id}/hangup`, undefined)).status).to.equal(200);
    const [ra, rx, rc] = await Promise.all([a.done, x.done, c.done]);
    expect(ra.code, ra.errors + ra.messages.slice(-3000)).to.equal(0);
    expect(ra.messages).to.match(/SIP\/2\.0 486 Busy Here/);
    expect(rx.code, rx.errors).to.equal(0);
    expect(rc.code, rc.errors).to.equal(0);
    // the flow of X (its connect) ran when the transfer failed: its variables say why
    const flow = await until(
      async () => {
        const xNow = await callsRepo(s.t.ctx.db).get(xCall.id);
        const r = await s.t.ctx.db('activeflows').where({ id: xNow!.activeflow_id }).first();
        return r?.status === 'ended' ? r : null;
      },
      10_000,
      'X’s flow ended',
    );
    expect(flow.variables).to.include({ 'svc.transfer.id': t.id, 'svc.transfer.status': 'failed', 'svc.transfer.fail_reason': 'target_busy' });
  });

  it('bad REFERs are refused (400 no Refer-To, 403 no such target, 400 not a Refer-To) and the call goes on', async () => {
    const domain = s.p.config.sipDomain;
    const refers = [
      { referTo: null, status: 400 },
      { referTo: `<sip:nobody@${domain}>`, status: 403 },
      { referTo: '<sip:b@h?Replaces=%E0%A4%A>', status: 400 },
    ];
    // C is never dialled (its sipp is killed at the end)
    const { a, x, xCall, aRow } = await connectedPair(
      s,
      open,
      (rtp) => badReferrer(rtp, refers),
      (tone) => party({ rtpPort: tone }),
    );
    // the three REFERs take about a second
    await sleep(2000);
    expect(await s.t.ctx.db('transfers').where({ transferer_call_id: aRow.id })).to.have.length(0);
    expect((await callsRepo(s.t.ctx.db).get(xCall.id))!.status).to.equal('progressing');
    expect((await callsRepo(s.t.ctx.db).get(aRow.id))!.status).to.equal('progressing');
    expect((await s.api.post(`/calls/${xCall.id}/hangup`, undefined)).status).to.equal(200);
    const [ra, rx] = await Promise.all([a.done, x.done]);
    // A got each refusal it expected, then its BYE
    expect(ra.code, ra.errors + ra.messages.slice(-3000)).to.equal(0);
    expect(rx.code, rx.errors).to.equal(0);
  });
});
