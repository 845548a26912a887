// The music of a held member of a switch room (media-app/media-server/fsmrf/member-hold.ts) against our
// switch (testkit/esl/fsmrf-rooms.ts, real on loopback), through the leg's own playMusic / stopPlayback / endMusic as
// media-app's hold loop calls them: a loop of the music ends at the done of its own file, not at a late
// done of an earlier file to the member; held, the member is deaf (it hears its file, or silence between
// two loops, never the room) until the hold ends, and stays deaf then if the room made it deaf before;
// a hold the switch refuses leaves the member not held, and the
// next play asks for the hold again (not a bare play that leaves it in the mix); the music is an http(s)
// URL, fetched through the egress policy into the directory shared with the switch (a real HTTP server on
// loopback), or the node's own music file, and nothing else.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { mohFile } from '../../../media-app/kit/moh-source';
import { bounded } from '../../../testkit/bounded';
import { toneWav, useFsmrfRooms } from '../../../testkit/esl/fsmrf-rooms';

/** The hold ends as media-state ends it: the music stops (the hold stays), then the music is over (unhold). */
async function holdEnds(leg: { stopPlayback(): Promise<void>; endMusic(): Promise<void> }): Promise<void> {
  await leg.stopPlayback();
  await leg.endMusic();
}

describe("fsmrf: the music of a room member's hold (member-hold.ts)", function () {
  this.timeout(30_000);
  // 1 s of 440 Hz, served on loopback; the switch's sounds directory shared with media-app
  const rooms = useFsmrfRooms({ prefix: 'mhold', serve: { name: 'music.wav', body: toneWav(440, 8000) } });
  const { suite, left, hears, member, maintenance } = rooms;

  it("a loop of the music ends at its own file's done: a late done of an earlier file to the member does not end it", async () => {
    const m = await member();
    const { leg } = m;
    // 0.8 s of 700 Hz played to the member first: the switch queues a member's files, the hold's file after it
    await rooms.playEarlier(m);
    const t0 = Date.now();
    const r = await bounded(leg.playMusic(rooms.url), 15_000, 'a loop of the music');
    expect(r.interrupted, 'played to its end').to.equal(false);
    expect(Date.now() - t0, "ended by its own file's done (1 s, queued behind the earlier one)").to.be.at.least(950);
    await holdEnds(leg);
    expect(left(), 'the music released at the hold end').to.deep.equal([]);
  });

  it('between two loops of its music the held member hears silence, not the room (deaf while held); unhold: it hears the room again', async () => {
    const a = await member();
    const b = await member(a.mix);
    const talk = path.join(suite.dir, 'talk1000.wav');
    fs.writeFileSync(talk, toneWav(1000, 8000 * 30));
    void b.peer.play(talk).catch(() => undefined);
    expect(await hears(a.peer, 1000), 'a hears b').to.be.above(0.3);
    const r = await bounded(a.leg.playMusic(rooms.url), 15_000, 'a loop of the music');
    expect(r.interrupted, 'played to its end').to.equal(false);
    // the loop would ask for the next play now: held, with no file playing
    expect(await hears(a.peer, 1000), 'held between two loops, a does not hear b').to.be.below(0.05);
    await holdEnds(a.leg);
    expect(await hears(a.peer, 1000), 'unheld, a hears b again').to.be.above(0.3);
  });

  it('a member the room made deaf before its hold stays deaf when the hold ends', async () => {
    const a = await member();
    const b = await member(a.mix);
    const talk = path.join(suite.dir, 'talk1000.wav');
    fs.writeFileSync(talk, toneWav(1000, 8000 * 30));
    void b.peer.play(talk).catch(() => undefined);
    await a.mix.mute(a.leg, 'out', true);
    const p = a.leg.playMusic(rooms.url);
    await bounded(p, 15_000, 'a loop of the music');
    await holdEnds(a.leg);
    expect(await hears(a.peer, 1000), 'still deaf: a does not hear b').to.be.below(0.05);
    await a.mix.mute(a.leg, 'out', false);
    expect(await hears(a.peer, 1000), 'undeafened by the room: a hears b').to.be.above(0.3);
  });

  it('a hold the switch refuses: the play fails, the member is not held; the next play asks for the hold again', async () => {
    const { mix, leg, id, flags } = await member();
    const nextOf = await maintenance();
    // the switch's room without the member for the hold: `hold <id>` answers -ERR Non-Existant ID
    const room = suite.rig.esl.api.conferences!.get(mix.name)!;
    const m = room.members.get(id)!;
    room.members.delete(id);
    const refused = await leg.playMusic(rooms.url).then(
      () => null,
      (e: Error) => e,
    );
    room.members.set(id, m);
    expect(refused?.message).to.match(/Non-Existant ID/);
    expect(await flags(), 'not held').to.not.match(/hold/);
    const next = leg.playMusic(rooms.url);
    await bounded(nextOf('hold-member', id), 5000, 'the next play holds the member');
    expect(await flags(), 'held').to.match(/hold/);
    await holdEnds(leg);
    expect((await bounded(next, 5000, 'the play ended by the unhold')).interrupted).to.equal(true);
    expect(await flags(), 'unheld').to.not.match(/hold/);
  });

  it("music that is neither an http(s) URL nor the node's own music is refused before anything is copied or sent; the node's own plays", async () => {
    const { leg, id, flags } = await member();
    const nextOf = await maintenance();
    const local = path.join(suite.dir, 'someone-elses.wav');
    fs.writeFileSync(local, toneWav(700, 8000));
    for (const m of [local, 'file:///etc/hosts', '/etc/hosts', 'ftp://127.0.0.1/x.wav']) {
      const e = await leg.playMusic(m).then(
        () => null,
        (err: Error) => err,
      );
      expect(e?.message, m).to.match(/must be an http\(s\) URL or the node's own music/);
    }
    expect(left(), 'nothing copied').to.deep.equal([]);
    expect(await flags(), 'not held').to.not.match(/hold/);

    const node = await mohFile(path.join(suite.dir, 'data'));
    const p = leg.playMusic(node);
    await bounded(nextOf('hold-member', id), 5000, "held with the node's music");
    expect(left(), "the node's music copied where the switch reads it").to.have.length(1);
    await holdEnds(leg);
    expect((await bounded(p, 5000, 'the play ended by the unhold')).interrupted).to.equal(true);
  });
});
