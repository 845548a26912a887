// Music on hold of a conference member on the fsmrf backend decided where it is carried out (a member's
// hold is the room's: media-server/fsmrf/member-hold.ts, test/media-app/member-hold-backends.test.ts).
// control-api refuses it (409) from the participant rows it reads before it sends the command
// (routes/calls-controls.ts), so a call that joins a room between that read and the command's arrival
// got the music: metadata moh true, its music a play queued behind the switch's
// conference application, never heard in the room. Here the command arrives for a call already in the
// switch's room (as it does after such an interleaving): the node refuses the music before anything
// changes (media-app/call/controls.ts, media-server/fsmrf/room-app.ts): no re-INVITE, no state, logged.
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

describe('the hold of a member of a switch room, sent after control-api read no membership (fsmrf)', function () {
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

  it('the node refuses music on hold before anything changes: no re-INVITE, no state', async () => {
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

    // what control-api sends once its check saw no member (the join came after it)
    const bus = commandBus(s.t.ctx);
    expect(await bus.toCallOwner({ type: 'call.moh', callId: id, on: true })).to.not.equal(null);
    const refused = (what: string) => lines.find((l) => l.includes(id) && l.includes(`${what} failed`) && l.includes('a leg in a switch room'));
    await until(() => (refused('music on hold') ? true : null), 10_000, 'refused on the node, by name');
    const m = await metadata(id);
    expect(m.moh, 'no music on hold').to.not.equal(true);

    expect((await request(s.t.app).post(`/v1.0/calls/${id}/hangup`).set('Authorization', `Bearer ${s.f.token}`)).status).to.equal(200);
    const r = await x.done;
    expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
    expect(offeredDirections(r), 'no re-INVITE reached the party').to.deep.equal(['sendrecv']);
  });
});
