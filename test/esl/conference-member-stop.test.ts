// mod_conference's `stop <current|all> <member>` on our switch (conference_api_sub_stop with a member id,
// FreeSWITCH 1.10's `Stopped <n> files.`): what plays to that member alone stops, its
// play-file-member-done follows, and a hold stands (the room still does not hear the member). The music
// of a room member's hold stops so when it changes (media-app/media-server/fsmrf/member-hold.ts). Each
// member is a channel whose far end is a media-engine endpoint (real RTP on loopback); who hears what is
// measured at the far ends, as test/esl/conference-relate.test.ts does (testkit/esl/switch-rooms.ts).
import { expect } from 'chai';
import { nextAction } from '../../testkit/esl/client';
import { useSwitchRooms } from '../../testkit/esl/switch-rooms';

describe('esl: conference stop <current|all> <member> (FreeSWITCH 1.10) through fsmrf on the media engine', function () {
  this.timeout(60_000);
  const rooms = useSwitchRooms([
    [440, 30],
    [1000, 30],
    [700, 30],
  ]);
  const { tone, hears } = rooms;

  it("stop current <member>: the held member's file stops (play-file-member-done), the member still held; an unknown member is named", async () => {
    const conf = await rooms.conference('stop-room');
    const raw = await rooms.maintenance();
    const a = await rooms.member(conf, 440);
    const b = await rooms.member(conf, 1000);
    const body = async (args: string) => (await b.ep.api('conference', `stop-room ${args}`)).getBody();
    expect(await body(`hold ${a.id} ${tone[700]}`)).to.equal(`+OK hold ${a.id}\n`);
    await nextAction(raw, 'hold-member');
    expect((await hears(a.peer, 700))[0], 'the held member hears its hold file').to.be.above(0.3);

    expect(await body(`stop current ${a.id}`)).to.equal('Stopped 1 files.\n');
    expect(await nextAction(raw, 'play-file-member-done')).to.include({ 'Member-ID': String(a.id), File: tone[700] });
    expect((await hears(a.peer, 700))[0], 'the file stopped').to.be.below(0.05);
    expect((await hears(b.peer, 440))[0], 'still held: b does not hear a').to.be.below(0.05);

    expect(await body(`stop all ${a.id}`), 'nothing plays to it any more').to.equal('Stopped 0 files.\n');
    expect(await body('stop current 9999')).to.equal('Member: 9999 not found.\n');
    expect(await body(`stop louder ${a.id}`)).to.equal('stop <[current|all|async|last]> [<member_id>]');
  });
});
