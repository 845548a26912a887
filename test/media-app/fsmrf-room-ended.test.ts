// A conference the switch ends by itself on the fsmrf backend (review s42 #2): another event-socket client
// kills the room's control leg (`api uuid_kill`), the switch's endconf ends the room, and media-app's room
// (media-app/conference/room.ts) is told by the mix's destroy: both participants leave, the conference is
// terminated, and their calls go on out of the room until hung up. Real loopback SIP
// and RTP: control-api, media-app, sipp, our switch, real Postgres and Redis.
import { expect } from 'chai';
import { RawClient } from '../../testkit/esl/client';
import { until } from '../../testkit/media-app/harness';
import { TEST_SWITCH_PASSWORD } from '../../testkit/media-app/switch';
import { type Stack } from '../xfer/support';
import { conferencesRepo } from '../../core/repos/conferences';
import { FsmrfBackend } from '../../media-app/media-server/fsmrf/backend';
import type { FsmrfMix } from '../../media-app/media-server/fsmrf/conference';
import { useRoomMembers } from './room-members';

describe('fsmrf backend: a conference the switch ends by itself', function () {
  this.timeout(90_000);
  const rooms = useRoomMembers('fsmrf', { prefix: 'room-ended' });
  let s: Stack;
  let client: RawClient | null = null;
  before(() => (s = rooms.s));
  after(() => client?.send('exit\n\n'));
  const { member } = rooms;

  it('the control leg killed from another client: both participants leave, the conference is terminated, the calls end', async () => {
    const conf = await conferencesRepo(s.t.ctx.db).create({ customer_id: s.f.customer.id, type: 'conference', name: `switch ended ${Date.now()}` });
    const a = await member(conf.id, 500);
    const b = await member(conf.id, 1100);
    expect(s.p.app.media).to.be.instanceOf(FsmrfBackend);
    const rooms = (s.p.app.media as unknown as { rooms: Set<FsmrfMix> }).rooms;
    expect(rooms.size, 'the one room on the switch').to.equal(1);
    const [mix] = [...rooms];

    client = await RawClient.authed(s.p.switch!.sw.listening.port, TEST_SWITCH_PASSWORD);
    const killed = Date.now();
    expect((await client.command(`api uuid_kill ${mix!.controlLegUuid}`)).body).to.match(/^\+OK/);

    const db = s.t.ctx.db;
    await until(async () => ((await db('conferences').where({ id: conf.id, status: 'terminated' }).first()) ? true : null), 5000, 'the conference terminated');
    const rows = (await db('conferencecalls').whereIn('reference_id', [a.id, b.id])) as { status: string }[];
    expect(rows.map((r) => r.status)).to.deep.equal(['leaved', 'leaved']);
    expect(Date.now() - killed, 'kill to terminated').to.be.below(5000);
    // the calls went on out of the room (their flow may have ended them already): hung up, each party gets its BYE
    for (const c of [a, b]) await s.api.post(`/calls/${c.id}/hangup`, undefined);
    const [ra, rb] = await Promise.all([a.x.done, b.x.done]);
    expect(ra.code, ra.errors + ra.messages.slice(-2000)).to.equal(0);
    expect(rb.code, rb.errors + rb.messages.slice(-2000)).to.equal(0);
  });
});
