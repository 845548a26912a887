// A member the switch lets go by itself (media-app/media-server/fsmrf/conference.ts memberGone), against
// our switch (testkit/esl/fsmrf-rooms.ts, real on loopback): the switch's del-member says whether the
// member's channel is down (FreeSWITCH's Answer-State "hangup", switch_channel.c
// switch_channel_event_set_basic_data, carried by conference_member_add_event_data), so a member whose
// channel hung up is told apart from one kicked from another client, whichever of the switch's event and
// the leg's BYE reaches media-app first (found in review: a hang-up whose del-member came first was
// reported as a kick: Twilio's ReasonParticipantLeft participant_kicked).
import { expect } from 'chai';
import { until } from '../../../testkit/media-app/harness';
import { toneWav, useFsmrfRooms } from '../../../testkit/esl/fsmrf-rooms';

describe('fsmrf: a member the switch let go, hung up or kicked', function () {
  this.timeout(30_000);
  const rooms = useFsmrfRooms({ prefix: 'mleft', serve: { name: 'tone.wav', body: toneWav(440, 800) } });
  const { member } = rooms;

  it("a member's channel killed on the switch leaves as hung up; a member kicked from another client as not", async () => {
    const host = await member();
    const left: { memberId: string; hungUp: boolean }[] = [];
    host.mix.on('memberLeft', (e) => left.push(e));

    const killed = await member(host.mix);
    expect((await host.leg.fs.api('uuid_kill', killed.leg.fs.uuid)).getBody()).to.match(/^\+OK/);
    await until(() => left.length === 1, 5000, "the killed member's leave");
    expect(left[0]).to.deep.equal({ memberId: killed.leg.uuid, hungUp: true });

    const kicked = await member(host.mix);
    expect(await kicked.api(`kick ${kicked.id}`)).to.match(/^\+OK kicked/);
    await until(() => left.length === 2, 5000, "the kicked member's leave");
    expect(left[1]).to.deep.equal({ memberId: kicked.leg.uuid, hungUp: false });
  });
});
