// Long calls after a transfer (issue 52): X (a party the platform called) is connected by its flow to
// A; A transfers X to C (blind by the API, attended by the API, blind by REFER from A's phone). With
// CALL_DIAL_TIMEOUT_MS at 1.5 s, X and C are held past three times that once joined (rows progressing,
// X hears C's tone and C still gets RTP, no BYE), then C hangs up and the records say C.
import { expect } from 'chai';
import { transfersRepo } from '../../core/repos/transfers';
import { until, type SippResult } from '../../testkit/media-app/harness';
import { callUp, callWithStatus, hangupOf } from '../../testkit/long-calls/calls';
import { holdFor } from '../../testkit/long-calls/hold';
import { answerer } from '../../testkit/long-calls/parties';
import { DIAL_TIMEOUT_MS, holdPast, LONG_CALL_ENV } from '../../testkit/long-calls/timers';
import { useXferStack, party, type Stack } from '../xfer/support';
import { connectedPair, type Connected } from '../xfer/referrer';

const HOLD_MS = holdPast(DIAL_TIMEOUT_MS);
/** C hangs up this long after its answer: past the transfer's own steps, the hold and the checks. */
const C_HANGS_UP_MS = HOLD_MS + 4500;

describe('long calls: transfers', function () {
  this.timeout(60_000);
  let s: Stack;
  const open = useXferStack((x) => (s = x), LONG_CALL_ENV);

  const ok = (r: SippResult, who: string) => expect(r.code, `${who}: ${r.errors}${r.messages.slice(-2000)}`).to.equal(0);
  /** X connected to A (scenario `aScenario(rtp, cPort)`); C answers and hangs up C_HANGS_UP_MS later. */
  const connected = (aScenario: (rtp: number, cPort: number) => string) => connectedPair(s, open, aScenario, (tone) => answerer({ rtpPort: tone, hangupAfterMs: C_HANGS_UP_MS }));

  /** Once the transfer is done: X and C held, X hears C and C gets RTP, then C hangs up. */
  async function heldAfterTransfer(p: Connected, transfer: { id: string } | { transfererCallId: string }) {
    const t = await until(
      async () => {
        const r = 'id' in transfer ? await transfersRepo(s.t.ctx.db).get(transfer.id) : await s.t.ctx.db('transfers').where({ transferer_call_id: transfer.transfererCallId }).first();
        if (r?.status === 'failed') throw new Error(`transfer failed: ${JSON.stringify(r)}`);
        return r?.status === 'done' ? r : null;
      },
      20_000,
      'transfer done',
    );
    const cRow = await callUp(s.t.ctx.db, t.transferee_call_id, 'C up');
    await callUp(s.t.ctx.db, p.xCall.id, 'X up');
    ok(await p.a.done, 'A');
    await holdFor(HOLD_MS, {
      db: s.t.ctx.db,
      calls: [p.xCall.id, cRow.id],
      parties: [
        { name: 'X', done: p.x.done },
        { name: 'C', done: p.c.done },
      ],
    });
    const voiced = p.sinkX.voiced;
    await until(() => p.sinkX.voiced - voiced > 25, 10_000, 'X hears C after the hold');
    const [rx, rc] = await Promise.all([p.x.done, p.c.done]);
    ok(rx, 'X');
    ok(rc, 'C');
    expect(hangupOf(await callWithStatus(s.t.ctx.db, cRow.id, 'hangup', 'C ended'))).to.deep.equal({ hangup_by: 'remote', hangup_reason: 'normal' });
    expect(hangupOf(await callWithStatus(s.t.ctx.db, p.xCall.id, 'hangup', 'X ended'))).to.deep.equal({ hangup_by: 'local', hangup_reason: 'normal' });
  }

  it('blind transfer by the API: X and C held past 3× the dial timeout, C hangs up', async () => {
    const p = await connected((rtp) => party({ rtpPort: rtp, byeTimeoutMs: 60_000 }));
    const res = await s.api.post('/transfers', { transfer_type: 'blind', transferer_call_id: p.aRow.id, transferee_addresses: [{ type: 'sip', target: `c@127.0.0.1:${p.cPort}` }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await heldAfterTransfer(p, { id: res.body.id });
  });

  it('attended transfer by the API: A consults C and leaves; X and C held past 3× the dial timeout, C hangs up', async () => {
    const p = await connected((rtp) => party({ rtpPort: rtp, byeTimeoutMs: 60_000 }));
    const res = await s.api.post('/transfers', { transfer_type: 'attended', transferer_call_id: p.aRow.id, transferee_addresses: [{ type: 'sip', target: `c@127.0.0.1:${p.cPort}` }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await until(async () => (await transfersRepo(s.t.ctx.db).get(res.body.id))?.status === 'consulting', 20_000, 'consulting');
    expect((await s.api.post(`/calls/${p.aRow.id}/hangup`, undefined)).status).to.equal(200);
    await heldAfterTransfer(p, { id: res.body.id });
  });

  it('blind transfer by REFER from A’s phone: X and C held past 3× the dial timeout, C hangs up', async () => {
    const p = await connected((rtp, pc) => party({ rtpPort: rtp, referTo: `sip:c@127.0.0.1:${pc}`, referAfterMs: 800 }));
    await heldAfterTransfer(p, { transfererCallId: p.aRow.id });
  });
});
