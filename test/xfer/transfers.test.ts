// Transfers end to end. X is a sipp party the platform called, whose flow connected it to A (another
// sipp party, the transferer's phone). C is the target: its RTP goes to a TonePeer, so once X is
// bridged to C, X's RTP sink hears the tone. Blind by REFER from A's phone and by the API; attended by
// the API (A consults C, then A hangs up and X is joined to C).
import { expect } from 'chai';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { transfersRepo } from '../../core/repos/transfers';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { createExtension, sipp, sleep, until } from '../../testkit/media-app/harness';
import { party, phoneCalls, registerOnly, TonePeer, type Stack, useXferStack } from './support';
import { connectedPair } from './referrer';

describe('transfers', function () {
  this.timeout(120_000);
  let s: Stack;
  const open = useXferStack((x) => (s = x));

  const live = (id: string, status = 'progressing') =>
    until(
      async () => {
        const c = await callsRepo(s.t.ctx.db).get(id);
        return c?.status === status ? c : null;
      },
      20_000,
      `call ${status}`,
    );

  /** X called by the platform and connected to A (`__PC__` in A's scenario: C's port); returns the two calls once both are up. */
  async function connected(aScenario: (rtp: number) => string) {
    const r = await connectedPair(
      s,
      open,
      (rtp, pc) => aScenario(rtp).replace('__PC__', String(pc)),
      (tone) => party({ rtpPort: tone, byeTimeoutMs: 60_000 }),
    );
    return { ...r, pc: r.cPort };
  }

  async function cCall(xCall: CallRow, transferId: string): Promise<CallRow> {
    const t = await until(
      async () => {
        const r = await transfersRepo(s.t.ctx.db).get(transferId);
        return r && r.transferee_call_id !== '00000000-0000-0000-0000-000000000000' ? r : null;
      },
      20_000,
      'transferee call',
    );
    void xCall;
    return (await callsRepo(s.t.ctx.db).get(t.transferee_call_id))!;
  }

  it('blind transfer by REFER from the phone: 202, NOTIFY 100 then 200, X hears C, A is released', async () => {
    const { x, a, c, xCall, aRow, sinkX } = await connected((rtp) => party({ rtpPort: rtp, referTo: 'sip:c@127.0.0.1:__PC__', referAfterMs: 800 }));
    const ra = await a.done;
    expect(ra.code, ra.errors + ra.messages).to.equal(0);
    const t = await until(
      async () => {
        const r = await s.t.ctx.db('transfers').where({ transferer_call_id: aRow.id }).first();
        return r && r.status === 'done' ? r : null;
      },
      20_000,
      'transfer done',
    );
    expect(t).to.include({ type: 'blind', source: 'refer' });
    expect(await callsRepo(s.t.ctx.db).get(aRow.id)).to.include({ status: 'hangup', hangup_by: 'local' });
    const voicedBefore = sinkX.voiced;
    await until(() => sinkX.voiced - voicedBefore > 25, 10_000, 'X hears C');
    const target = await cCall(xCall, t.id);
    expect(target.destination.target).to.match(/^c@127\.0\.0\.1:/);
    // X hangs up (here: the API) and C goes with it
    expect((await s.api.post(`/calls/${xCall.id}/hangup`, undefined)).status).to.equal(200);
    const [rx, rc] = await Promise.all([x.done, c.done]);
    expect(rx.code, rx.errors).to.equal(0);
    expect(rc.code, rc.errors).to.equal(0);
    await live(target.id, 'hangup');
  });

  it('blind transfer by the API', async () => {
    const { x, a, c, xCall, aRow, sinkX, pc } = await connected((rtp) => party({ rtpPort: rtp, byeTimeoutMs: 60_000 }));
    await sleep(500);
    expect(sinkX.voiced).to.be.lessThan(5);
    const res = await s.api.post('/transfers', { transfer_type: 'blind', transferer_call_id: aRow.id, transferee_addresses: [{ type: 'sip', target: `c@127.0.0.1:${pc}` }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.include({ type: 'blind', transferer_call_id: aRow.id, status: 'initiating' });
    const ra = await a.done; // A gets the BYE
    expect(ra.code, ra.errors).to.equal(0);
    await until(() => sinkX.voiced > 25, 10_000, 'X hears C');
    const got = await s.api.get(`/transfers/${res.body.id}`);
    expect(got.body).to.include({ status: 'done' });
    expect(got.body.groupcall_id).to.not.equal('00000000-0000-0000-0000-000000000000');
    const target = await cCall(xCall, res.body.id);
    // C hangs up this time... by the API: X goes with it
    expect((await s.api.post(`/calls/${target.id}/hangup`, undefined)).status).to.equal(200);
    const [rx, rc] = await Promise.all([x.done, c.done]);
    expect(rx.code, rx.errors).to.equal(0);
    expect(rc.code, rc.errors).to.equal(0);
  });

  it('attended transfer by the API: A consults C (X on hold), then A leaves and X talks to C', async () => {
    const { x, a, c, xCall, aRow, sinkX, pc } = await connected((rtp) => party({ rtpPort: rtp, byeTimeoutMs: 60_000 }));
    const res = await s.api.post('/transfers', { transfer_type: 'attended', transferer_call_id: aRow.id, transferee_addresses: [{ type: 'sip', target: `c@127.0.0.1:${pc}` }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await until(async () => (await transfersRepo(s.t.ctx.db).get(res.body.id))?.status === 'consulting', 20_000, 'consulting');
    await sleep(600);
    expect(sinkX.voiced, 'X on hold hears nothing of C').to.be.lessThan(10);
    // the transferer hangs up: the transfer completes
    expect((await s.api.post(`/calls/${aRow.id}/hangup`, undefined)).status).to.equal(200);
    const ra = await a.done;
    expect(ra.code, ra.errors).to.equal(0);
    await until(async () => (await transfersRepo(s.t.ctx.db).get(res.body.id))?.status === 'done', 10_000, 'done');
    await until(() => sinkX.voiced > 25, 10_000, 'X hears C');
    expect((await callsRepo(s.t.ctx.db).get(xCall.id))!.status).to.equal('progressing');
    expect((await s.api.post(`/calls/${xCall.id}/hangup`, undefined)).status).to.equal(200);
    const [rx, rc] = await Promise.all([x.done, c.done]);
    expect(rx.code, rx.errors).to.equal(0);
    expect(rc.code, rc.errors).to.equal(0);
  });

  it('attended transfer by the API whose transferer is the master: its chained leg A is joined to C, not closed with it', async () => {
    const { x, a, c, xCall, aRow, sinkX, sinkA, cPort } = await connectedPair(
      s,
      open,
      (rtp) => party({ rtpPort: rtp, byeTimeoutMs: 60_000 }),
      (tone) => party({ rtpPort: tone, byeTimeoutMs: 60_000 }),
    );
    const res = await s.api.post('/transfers', { transfer_type: 'attended', transferer_call_id: xCall.id, transferee_addresses: [{ type: 'sip', target: `c@127.0.0.1:${cPort}` }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await until(async () => (await transfersRepo(s.t.ctx.db).get(res.body.id))?.status === 'consulting', 20_000, 'consulting');
    await until(() => sinkX.voiced > 25, 10_000, 'X consults C');
    // X, the master of A's leg, hangs up: the transfer completes and A (its chained leg) stays, with C
    expect((await s.api.post(`/calls/${xCall.id}/hangup`, undefined)).status).to.equal(200);
    const rx = await x.done;
    expect(rx.code, rx.errors).to.equal(0);
    const t = await until(
      async () => {
        const r = await transfersRepo(s.t.ctx.db).get(res.body.id);
        return r && r.status !== 'consulting' && r.status !== 'initiating' ? r : null;
      },
      10_000,
      'transfer settled',
    );
    expect(t.status).to.equal('done');
    expect((await callsRepo(s.t.ctx.db).get(aRow.id))!.status).to.equal('progressing');
    const heard = sinkA.voiced;
    await until(() => sinkA.voiced - heard > 25, 10_000, 'A hears C');
    expect((await s.api.post(`/calls/${aRow.id}/hangup`, undefined)).status).to.equal(200);
    const [ra, rc] = await Promise.all([a.done, c.done]);
    expect(ra.code, ra.errors).to.equal(0);
    expect(rc.code, rc.errors).to.equal(0);
  });

  it('attended transfer by REFER with Replaces: the peers of the two calls of the phone are joined', async () => {
    // call 2: the phone (extension a2) calls extension y through the platform, with a Call-ID we know
    const a2 = await createExtension(s.f.customer.id);
    const y = await createExtension(s.f.customer.id);
    const tone = await TonePeer.open();
    open.push(tone);
    const server = `127.0.0.1:${s.p.sipPort}`;
    const yPort = await freePort();
    const reg = await sipp(registerOnly(y.ext.username, y.domain), [server, '-i', '127.0.0.1', '-p', String(yPort), '-m', '1', '-au', y.ext.username, '-ap', y.password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    const yPhone = sipp(party({ rtpPort: tone.port, byeTimeoutMs: 60_000 }), ['-i', '127.0.0.1', '-p', String(yPort), '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 });
    const cidPrefix = `xrep${Date.now()}`;
    const replaces = `${cidPrefix}-1@127.0.0.1`;
    // call 1: X called by the platform and connected to the phone's other line, which later sends the REFER
    const { x, a, xCall, aRow, sinkX } = await connected((rtp) =>
      party({ rtpPort: rtp, referTo: `sip:${y.ext.extension}@${y.domain}?Replaces=${encodeURIComponent(`${replaces};to-tag=t;from-tag=f`)}`, referAfterMs: 3500 }),
    );
    const a2Phone = sipp(
      phoneCalls(a2.ext.username, a2.domain, y.ext.extension, { waitForBye: true }),
      [server, '-i', '127.0.0.1', '-m', '1', '-au', a2.ext.username, '-ap', a2.password, '-cid_str', `${cidPrefix}-%u@%s`, '-timeout', '60s', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 70_000 },
    );
    const [ra, ra2] = await Promise.all([a.done, a2Phone.done]);
    expect(ra.code, 'line 1 ' + ra.errors + ra.messages).to.equal(0);
    expect(ra2.code, 'line 2 ' + ra2.errors + ra2.messages).to.equal(0);
    const t = await until(
      async () => {
        const r = await s.t.ctx.db('transfers').where({ transferer_call_id: aRow.id }).first();
        return r && r.status === 'done' ? r : null;
      },
      10_000,
      'transfer done',
    );
    expect(t.type).to.equal('attended');
    await until(() => sinkX.voiced > 25, 10_000, 'X hears Y');
    expect((await s.api.post(`/calls/${xCall.id}/hangup`, undefined)).status).to.equal(200);
    const [rx, ry] = await Promise.all([x.done, yPhone.done]);
    expect(rx.code, rx.errors).to.equal(0);
    expect(ry.code, ry.errors).to.equal(0);
  });

  it('bad input: unknown call 404, ended call 409, bad type 400, no addresses 400', async () => {
    const body = (id: string, extra: object = {}) => ({ transfer_type: 'blind', transferer_call_id: id, transferee_addresses: [{ type: 'sip', target: 'c@127.0.0.1:5999' }], ...extra });
    const unknown = await s.api.post('/transfers', body('6f1d0a52-9a57-4d39-9b8e-0d4f7f0b0c11'));
    expect(unknown.status).to.equal(404);
    expect(JSON.stringify(unknown.body)).to.include('CALL_NOT_FOUND');
    const row = await callsRepo(s.t.ctx.db).create({
      customer_id: s.f.customer.id,
      source: { type: 'tel', target: '+899100000003' },
      destination: { type: 'sip', target: 'z@127.0.0.1:5999' },
      direction: 'outgoing',
    });
    const dialing = await s.api.post('/transfers', body(row.id));
    expect(dialing.status).to.equal(409);
    expect(JSON.stringify(dialing.body)).to.include('CALL_STATE_INVALID');
    await callsRepo(s.t.ctx.db).hangup(row.id, 'failure');
    const ended = await s.api.post('/transfers', body(row.id));
    expect(ended.status).to.equal(409);
    expect(JSON.stringify(ended.body)).to.include('CALL_ALREADY_HANGUP');
    expect((await s.api.post('/transfers', body(row.id, { transfer_type: 'warm' }))).status).to.equal(400);
    expect((await s.api.post('/transfers', body(row.id, { transferee_addresses: [] }))).status).to.equal(400);
    expect((await s.api.post('/transfers', { transferer_call_id: row.id, transferee_addresses: [{ type: 'sip', target: 'c@h' }] })).status).to.equal(400);
    expect((await s.api.get('/transfers/6f1d0a52-9a57-4d39-9b8e-0d4f7f0b0c11')).status).to.equal(404);
  });
});
