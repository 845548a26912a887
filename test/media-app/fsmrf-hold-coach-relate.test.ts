// A coach whose relate fails as it enters a switch room (media-app/media-server/fsmrf/coaching.ts), against
// our switch (testkit/esl/switch-rig.ts, real on loopback). The room enters a coach as media-app/conference/room.ts
// does: in the mix muted 'in', made a coach (the mix's coach), and on a failure out again (the mix's
// leave). The failure is the switch's own answer: at the relate the switch's room has no member for the
// coach (as when the member left there and its del-member is not read yet), so relate answers
// `-ERR relationship <coach>->… not found.`. The coach's join fails with an error naming the coach and
// the relate; nothing is left behind: no relationship on the switch, the coach out of the room (its
// channel goes on), and the mix no longer counts it as a coach (a later entry of the same leg is no coach).
import { expect } from 'chai';
import type { FsmrfMix } from '../../media-app/media-server/fsmrf/conference';
import { useFsmrfSuite } from '../../testkit/esl/fsmrf-suite';

describe("fsmrf: a coach's relate that fails as it enters the room (coaching.ts)", function () {
  this.timeout(30_000);
  const suite = useFsmrfSuite();
  const rooms: FsmrfMix[] = [];
  let seq = 0;
  afterEach(async () => {
    for (const r of rooms.splice(0)) await r.destroy().catch(() => undefined);
  });

  /** The switch's room of `mix` (our switch's conferences). */
  const switchRoom = (mix: FsmrfMix) => {
    const room = suite.rig.esl.api.conferences?.get(mix.name);
    if (!room) throw new Error(`the switch has no room ${mix.name}`);
    return room;
  };

  /** The switch's member id of `uuid` in `mix`'s room, or undefined. */
  const memberIdOf = (mix: FsmrfMix, uuid: string) => [...switchRoom(mix).members.values()].find((m) => m.channel.uuid === uuid)?.id;

  /** A leg called through the backend and entered into `mix` (`mute` as the room enters a coach). */
  async function enter(mix: FsmrfMix, opts: { mute?: 'in' } = {}) {
    const { leg } = await suite.call();
    await mix.join(leg, opts);
    const id = memberIdOf(mix, leg.uuid);
    expect(id, 'in the switch room').to.be.a('number');
    return { leg, id: id! };
  }

  it('the switch has no member for the coach at its relate: the join fails naming it, and nothing is left half-done', async () => {
    const mix = await suite.backend.createMix(`crel${process.pid}x${++seq}`);
    rooms.push(mix);
    const a = await enter(mix);
    await enter(mix);
    const coach = await enter(mix, { mute: 'in' });
    const room = switchRoom(mix);

    // the switch's room without the coach for its relate, then as it was
    const m = room.members.get(coach.id)!;
    room.members.delete(coach.id);
    const failed = await mix.coach(coach.leg, a.leg).then(
      () => null,
      (e: Error) => e,
    );
    room.members.set(coach.id, m);
    expect(failed?.message, 'the join fails naming the coach and the relate').to.match(
      new RegExp(`^conference ${mix.name} relate ${coach.id} ${a.id} clear: the switch has no member ${coach.id} \\(the coach\\) in the room: -ERR relationship ${coach.id}->${a.id} not found\\.`),
    );
    expect(room.relationshipTotal, 'no relationship set on the switch').to.equal(0);

    // what the room does with a failed join: the coach out of the mix, its call going on
    await mix.leave(coach.leg);
    expect(memberIdOf(mix, coach.leg.uuid), 'the coach out of the switch room').to.equal(undefined);
    expect(coach.leg.destroyed, "the coach's channel goes on").to.equal(false);

    // the mix forgot it as a coach: the same leg entering again (not as a coach), then a member after it, relates nothing
    await mix.join(coach.leg);
    await enter(mix);
    expect(room.relationshipTotal, 'no relate made for the failed coach').to.equal(0);
  });

  it('a coach the switch has: the relate is made (the check above can tell the two apart)', async () => {
    const mix = await suite.backend.createMix(`crel${process.pid}x${++seq}`);
    rooms.push(mix);
    const a = await enter(mix);
    const b = await enter(mix);
    const coach = await enter(mix, { mute: 'in' });
    await mix.coach(coach.leg, a.leg);
    const room = switchRoom(mix);
    expect(room.members.get(coach.id)?.relations.get(b.id), 'b does not hear the coach').to.deep.equal({ speak: false, hear: true });
    expect(room.members.get(coach.id)?.relations.has(a.id), 'the coached hears it').to.equal(false);
    // a member entering after the coach is related too
    const d = await enter(mix);
    expect(room.members.get(coach.id)?.relations.get(d.id), 'a later member does not hear the coach').to.deep.equal({ speak: false, hear: true });
  });
});
