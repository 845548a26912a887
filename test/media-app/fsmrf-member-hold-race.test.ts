// Music on hold of a conference member on the fsmrf backend, the command arriving at the node for a call
// already in the switch's room: it was refused there (a play queued behind the switch's conference
// application would never be heard in the room); now the room plays it (media-server/fsmrf/member-hold.ts:
// `conference <room> play <file> <member> nomux` at each play-file-member-done), so the node takes it:
// metadata moh true, then false, no re-INVITE (music on hold is no hold), nothing refused. By hearing on
// both backends: test/media-app/fsmrf-hold-member-moh.test.ts.
// Real loopback SIP and RTP: control-api, media-app on our switch, a sipp party, real Postgres and Redis.
import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import request from 'supertest';
import { freePort, udpBound } from '../../testkit/ports';
import { killAllSipp, sipp, until } from '../../testkit/media-app/harness';
import { startStack, TonePeer, type Stack } from '../xfer/support';
import { closeCommandBus, commandBus } from '../../control-api/calls/bus';
import { conferencesRepo } from '../../core/repos/conferences';
import { heldParty, offeredDirections } from './held-party';

describe('music on hold of a member of a switch room, sent straight to the node (fsmrf)', function () {
  this.timeout(120_000);
  let s: Stack;
  const peers: TonePeer[] = [];
  const log = new PassThrough();
  const lines: string[] = [];
  log.on('data', (b: Buffer) => lines.push(...b.toString().split('\n').filter(Boolean)));

  before(async () => {
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }, { mediaServer: 'fsmrf', log });
  });
  after(async () => {
    killAllSipp();
    for (const t of peers) t.close();
    if (s) await closeCommandBus(s.t.ctx);
    await s?.close();
  });

  const metadata = async (id: string) => ((await s.t.ctx.db('calls').where({ id }).first()) as { metadata: Record<string, unknown> }).metadata;

  it('the node plays it through the room: its state on, then off, no re-INVITE, nothing refused', async () => {
    const peer = await TonePeer.open();
    peers.push(peer);
    const conf = await conferencesRepo(s.t.ctx.db).create({ customer_id: s.f.customer.id, type: 'conference', name: `race ${Date.now()}` });
    const px = await freePort();
    // the party takes no re-INVITE: one would fail its scenario
    const x = sipp(heldParty(peer.port, []), ['-i', '127.0.0.1', '-p', String(px), '-m', '1', '-timeout', '90s'], { killAfterMs: 100_000 });
    await udpBound(px);
    const res = await request(s.t.app)
      .post('/v1.0/calls')
      .set('Authorization', `Bearer ${s.f.token}`)
      .send({
        source: { type: 'tel', target: '+15550001111' },
        destinations: [{ type: 'sip', target: `member@127.0.0.1:${px}` }],
        actions: [{ type: 'conference_join', option: { conference_id: conf.id } }],
      });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const id = res.body.calls[0].id as string;
    await until(async () => ((await s.t.ctx.db('conferencecalls').where({ reference_id: id, status: 'joined' }).first()) ? true : null), 20_000, 'in the room');

    const bus = commandBus(s.t.ctx);
    expect(await bus.toCallOwner({ type: 'call.moh', callId: id, on: true })).to.not.equal(null);
    await until(async () => ((await metadata(id)).moh === true ? true : null), 10_000, 'music on hold on');
    expect(await bus.toCallOwner({ type: 'call.moh', callId: id, on: false })).to.not.equal(null);
    await until(async () => ((await metadata(id)).moh === false ? true : null), 10_000, 'music on hold off');
    expect(
      lines.filter((l) => l.includes(id) && / failed|refused/.test(l)),
      'nothing refused or failed',
    ).to.deep.equal([]);

    expect((await request(s.t.app).post(`/v1.0/calls/${id}/hangup`).set('Authorization', `Bearer ${s.f.token}`)).status).to.equal(200);
    const r = await x.done;
    expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
    expect(offeredDirections(r), 'no re-INVITE reached the party').to.deep.equal(['sendrecv']);
  });
});
