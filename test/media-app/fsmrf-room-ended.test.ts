// A conference the switch ends by itself on the fsmrf backend (review s42 #2): another event-socket client
// kills the room's control leg (`api uuid_kill`), the switch's endconf ends the room, and media-app's room
// (media-app/conference/room.ts) is told by the mix's destroy: both participants leave, the conference is
// terminated, and their calls go on out of the room until hung up. Real loopback SIP
// and RTP: control-api, media-app, sipp, our switch, real Postgres and Redis.
import { expect } from 'chai';
import { RawClient } from '../esl/support';
import { freePort, udpBound } from '../../testkit/ports';
import { killAllSipp, sipp, until } from '../../testkit/media-app/harness';
import { TEST_SWITCH_PASSWORD } from '../../testkit/media-app/switch';
import { RtpParty } from '../../testkit/conference/party';
import { startStack, type Stack } from '../xfer/support';
import { closeCommandBus } from '../../control-api/calls/bus';
import { conferencesRepo } from '../../core/repos/conferences';
import { FsmrfBackend } from '../../media-app/media-server/fsmrf/backend';
import type { FsmrfMix } from '../../media-app/media-server/fsmrf/conference';
import { heldParty } from './held-party';

describe('fsmrf backend: a conference the switch ends by itself', function () {
  this.timeout(90_000);
  let s: Stack;
  let client: RawClient | null = null;
  const parties: RtpParty[] = [];

  before(async () => {
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }, { mediaServer: 'fsmrf' });
  });
  after(async () => {
    killAllSipp();
    client?.send('exit\n\n');
    for (const p of parties) p.close();
    if (s) await closeCommandBus(s.t.ctx);
    await s?.close();
  });

  async function member(conferenceId: string, freq: number) {
    const party = await RtpParty.open(freq);
    parties.push(party);
    const px = await freePort();
    const x = sipp(heldParty(party.port, []), ['-i', '127.0.0.1', '-p', String(px), '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 });
    await udpBound(px);
    const res = await s.api.post('/calls', {
      source: { type: 'tel', target: '+15550001111' },
      destinations: [{ type: 'sip', target: `m${freq}@127.0.0.1:${px}` }],
      actions: [{ type: 'conference_join', option: { conference_id: conferenceId } }],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const id = res.body.calls[0].id as string;
    await until(async () => ((await s.t.ctx.db('conferencecalls').where({ reference_id: id, status: 'joined' }).first()) ? true : null), 20_000, 'in the room');
    return { id, x };
  }

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
