// mod_conference's relate, hold and unhold on our switch, through fsmrf's public API (its endpoint's
// api: `conference <room> …`), with FreeSWITCH 1.10's replies and maintenance events. Each member is a
// channel whose far end is a media-engine endpoint (real RTP on loopback); who hears whom is measured
// at the far ends (a recording there, the share of each member's tone), as test/esl/conference.test.ts does (testkit/esl/switch-rooms.ts).
import { expect } from 'chai';
import { nextAction } from '../../testkit/esl/client';
import { useSwitchRooms } from '../../testkit/esl/switch-rooms';

describe('esl: conference relate, hold and unhold (FreeSWITCH 1.10) through fsmrf on the media engine', function () {
  this.timeout(60_000);
  const rooms = useSwitchRooms([
    [440, 30],
    [1000, 30],
    [700, 30],
    [880, 30],
  ]);
  const { tone, hears, conference, member } = rooms;

  it('relate nospeak: the other member does not hear the member, the rest do; a later member is in no relationship; clear undoes it', async () => {
    const conf = await conference('rel-speak');
    const raw = await rooms.maintenance();
    const coach = await member(conf, 440);
    const agent = await member(conf);
    const customer = await member(conf);
    const body = async (args: string) => (await coach.ep.api('conference', `rel-speak ${args}`)).getBody();
    expect(await body('relate')).to.equal('+OK No relationships\n');
    // the coach shape: heard by the agent only
    expect(await body(`relate ${coach.id} ${customer.id} nospeak`)).to.equal(`+OK ${coach.id}->${customer.id} nospeak set\n`);
    const [agentHears] = await hears(agent.peer, 440);
    const [customerHears] = await hears(customer.peer, 440);
    expect(agentHears, 'the agent hears the coach').to.be.above(0.3);
    expect(customerHears, 'the customer does not').to.be.below(0.05);
    expect(await body(`relate ${coach.id}`)).to.equal(`${coach.id} -> ${customer.id} NOSPEAK HEAR NOSENDVIDEO \n`);
    // relate alone with relationships writes nothing: the event socket's reply to an empty answer
    expect(await body('relate')).to.equal('-ERR no reply\n');

    // a member who joins later: the relationship names ids, so it hears the coach until related too
    const late = await member(conf);
    await nextAction(raw, 'add-member', late.id);
    expect((await hears(late.peer, 440))[0], 'the later member hears the coach').to.be.above(0.3);
    expect(await body(`relate ${coach.id} ${late.id},${customer.id} nospeak`)).to.equal(`+OK ${coach.id}->${late.id} nospeak set\n+OK ${coach.id}->${customer.id} nospeak set\n`);
    expect((await hears(late.peer, 440))[0], 'related, it does not').to.be.below(0.05);

    expect(await body(`relate ${coach.id} ${customer.id},${late.id} clear`)).to.equal(`+OK relationship ${coach.id}->${customer.id} cleared.\n+OK relationship ${coach.id}->${late.id} cleared.\n`);
    expect((await hears(customer.peer, 440))[0], 'cleared: the customer hears the coach again').to.be.above(0.3);
    expect(await body('relate')).to.equal('+OK No relationships\n');
  });

  it('relate nohear: the member does not hear the other one; a relationship leaves with its member; bad input', async () => {
    const conf = await conference('rel-hear');
    const a = await member(conf, 440);
    const b = await member(conf, 1000);
    const c = await member(conf);
    const body = async (args: string) => (await c.ep.api('conference', `rel-hear ${args}`)).getBody();
    expect(await body(`relate ${c.id} ${a.id} nohear`)).to.equal(`+OK ${c.id}->${a.id} nohear set\n`);
    const [fromA, fromB] = await hears(c.peer, 440, 1000);
    expect(fromA, 'c does not hear a').to.be.below(0.05);
    expect(fromB, 'c hears b').to.be.above(0.3);
    expect((await hears(b.peer, 440))[0], 'b still hears a').to.be.above(0.3);
    // both words: neither hears the other's side of the pair
    expect(await body(`relate ${a.id} ${b.id} nospeak,nohear`)).to.equal(`+OK ${a.id}->${b.id} nospeak,nohear set\n`);
    expect(await body(`relate ${a.id},${c.id}`)).to.equal(`${a.id} -> ${b.id} NOSPEAK NOHEAR NOSENDVIDEO \n${c.id} -> ${a.id} SPEAK NOHEAR NOSENDVIDEO \n`);
    expect((await hears(b.peer, 440))[0], 'b does not hear a').to.be.below(0.05);
    expect((await hears(a.peer, 1000))[0], 'a does not hear b').to.be.below(0.05);

    expect(await body(`relate ${a.id} 9999 nospeak`)).to.equal(`-ERR relationship ${a.id}->9999 not found.\n`);
    expect(await body(`relate 9999 ${a.id} clear`)).to.equal(`-ERR relationship 9999->${a.id} not found.\n`);
    expect(await body(`relate ${a.id} ${b.id}`)).to.equal('relate <member_id>[,<member_id>] <other_member_id>[,<other_member_id>] [nospeak|nohear|clear]');
    expect(await body(`relate ${a.id} ${b.id} louder`)).to.equal('relate <member_id>[,<member_id>] <other_member_id>[,<other_member_id>] [nospeak|nohear|clear]');

    // c leaves: its relationship goes with it (a's toward b stays)
    await c.ep.confKick();
    expect(await body(`relate ${c.id}`)).to.equal('-ERR no reply\n');
    expect(await body(`relate ${a.id}`)).to.equal(`${a.id} -> ${b.id} NOSPEAK NOHEAR NOSENDVIDEO \n`);
  });

  it('hold <id> <file>: the member is not heard and hears the file (hold-member, Hold: true, listed hold); unhold: heard again, the file stops (unhold-member)', async () => {
    const conf = await conference('hold-room');
    const raw = await rooms.maintenance();
    const a = await member(conf, 440);
    const b = await member(conf, 1000);
    const body = async (args: string) => (await b.ep.api('conference', `hold-room ${args}`)).getBody();
    expect(await body(`hold ${a.id} ${tone[700]}`)).to.equal(`+OK hold ${a.id}\n`);
    expect(await nextAction(raw, 'hold-member')).to.include({ 'Member-ID': String(a.id), Hold: 'true', Speak: 'true' });
    expect((await hears(b.peer, 440))[0], 'b does not hear the held member').to.be.below(0.05);
    const [music, room] = await hears(a.peer, 700, 1000);
    expect(music, 'the held member hears its hold file').to.be.above(0.3);
    expect(room, 'in place of the room').to.be.below(0.05);
    expect((await conf.list()).getBody()).to.match(new RegExp(`^${a.id};[^;]*;${a.ep.uuid};[^;]*;[^;]*;hold(\\|floor)?;0;0;100$`, 'm'));

    expect(await body(`unhold ${a.id}`)).to.equal(`+OK unhold ${a.id}\n`);
    expect(await nextAction(raw, 'unhold-member')).to.include({ 'Member-ID': String(a.id), Hold: 'false' });
    const done = await nextAction(raw, 'play-file-member-done');
    expect(done).to.include({ 'Member-ID': String(a.id), File: tone[700] });
    expect((await hears(b.peer, 440))[0], 'b hears a again').to.be.above(0.3);
    const [after, roomAfter] = await hears(a.peer, 700, 1000);
    expect(after, 'the hold file stopped').to.be.below(0.05);
    expect(roomAfter, 'a hears the room again').to.be.above(0.3);

    // a muted member held and unheld stays muted; bad input
    await a.ep.confMute();
    await body(`hold ${a.id}`);
    await body(`unhold ${a.id}`);
    await nextAction(raw, 'unhold-member');
    expect((await hears(b.peer, 440))[0], 'still muted').to.be.below(0.05);
    expect(await body('hold 9999')).to.equal('-ERR Non-Existant ID 9999\n');
    expect(await body('unhold')).to.equal('unhold <[member_id|all]|last|non_moderator>');
  });

  it("play <file> <id> mixes the file with the room (FreeSWITCH's default), nomux plays it in place of the room; a held member with no file hears the room", async () => {
    const conf = await conference('mux-room');
    const raw = await rooms.maintenance();
    const a = await member(conf);
    const b = await member(conf, 1000);
    const body = async (args: string) => (await b.ep.api('conference', `mux-room ${args}`)).getBody();
    expect(await body(`play ${tone[700]} ${a.id}`)).to.equal(`(play) Playing file ${tone[700]} to member ${a.id}\n`);
    const [file, room] = await hears(a.peer, 700, 1000);
    expect(file, 'the member hears the file').to.be.above(0.2);
    expect(room, 'and the room with it').to.be.above(0.2);
    expect((await hears(b.peer, 700))[0], 'the others do not hear the file').to.be.below(0.05);
    // the member's files stop at unhold (FILE_STOP_ALL), a mixed one too, each with its done
    await body(`hold ${a.id}`);
    expect(await body(`unhold ${a.id}`)).to.equal(`+OK unhold ${a.id}\n`);
    expect(await nextAction(raw, 'play-file-member-done', a.id)).to.include({ File: tone[700] });
    expect((await hears(a.peer, 700))[0], 'the mixed file stopped').to.be.below(0.05);

    expect(await body(`play ${tone[880]} ${a.id} nomux`)).to.equal(`(play) Playing file ${tone[880]} to member ${a.id}\n`);
    const [alone, roomNot] = await hears(a.peer, 880, 1000);
    expect(alone, 'nomux: the member hears the file').to.be.above(0.3);
    expect(roomNot, 'in place of the room').to.be.below(0.05);
    await body(`unhold ${a.id}`);
    await nextAction(raw, 'play-file-member-done', a.id);

    // held, no file playing: FreeSWITCH's mix does not look at the hold, the member hears the room
    expect(await body(`hold ${a.id}`)).to.equal(`+OK hold ${a.id}\n`);
    expect((await hears(a.peer, 1000))[0], 'a held member with no file hears the room').to.be.above(0.3);
    await body(`unhold ${a.id}`);
  });
});
