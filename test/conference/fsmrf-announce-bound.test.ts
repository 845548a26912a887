// A member's announcement on the fsmrf backend (media-app/media-server/fsmrf/conference-say.ts, MemberSay)
// has a bound of its own: a timer armed once the switch took `saymember`, on the backend's timers (here
// virtual ones: they fire when the test moves time on). Against our switch (testkit/esl/fsmrf-rooms.ts, real on
// loopback): a say the switch ends (play-file-member-done) clears its timer; a switch that never ends it
// (here the member's speech held in the switch, as a real FreeSWITCH whose profile has no TTS queues
// nothing) fails the say at the bound, not before, and leaves nothing armed. A <Play>'s file, fetched by
// media-app through its egress policy into the directory shared with the switch (shared-prompts.ts; a
// real HTTP server on loopback, allowed by the policy), has a bound of the file's length and 2 s, and is
// removed whether the switch ended it or the bound did. A <Say> in a language of its own is saymember's
// #<voice>#, a customer's text still spoken whole.
import { expect } from 'chai';
import { SayTimeout, sayBoundMs } from '../../media-app/media-server/fsmrf/conference-say';
import { boundedOnce, bounded } from '../../testkit/bounded';
import { toneWav, useFsmrfRooms } from '../../testkit/esl/fsmrf-rooms';
import { watchedTimers } from '../support/virtual-timers';

describe('fsmrf conference announcement: the bound of a member say', function () {
  this.timeout(30_000);
  const { clock, armings, timers } = watchedTimers();
  // 1 s of 440 Hz at 8 kHz, served on loopback; the switch's sounds directory shared with media-app
  const rooms = useFsmrfRooms({ prefix: 'saybound', serve: { name: 'tone.wav', body: toneWav(440, 8000) }, connect: { timers } });
  const { left } = rooms;
  const member = () => rooms.member();

  /** `outcome` still pending 1 ms before its bound of `ms` (virtual time), settled at it: what it settled with. */
  async function settledAtBound(outcome: Promise<unknown>, ms: number, what: string): Promise<unknown> {
    clock.advance(ms - 1);
    const early = await Promise.race([outcome, new Promise((r) => setImmediate(() => r('pending')))]);
    expect(early, 'not before its bound').to.equal('pending');
    clock.advance(1);
    return bounded(outcome, 5000, what);
  }

  it('a say the switch ends clears its timer', async () => {
    const { mix, leg } = await member();
    const text = 'one two three';
    const armed = boundedOnce(armings, 'set', 10_000, "the say's bound armed");
    await bounded(mix.announceTo(leg).say(text, {}), 15_000, 'the say ended by the switch');
    expect((await armed)[0], 'its delay').to.equal(sayBoundMs(text));
    expect(clock.pending(), 'nothing left armed').to.equal(0);
  });

  it('a switch that never ends it: the say fails at its bound, not before, and nothing is left armed', async () => {
    const { mix, leg } = await member();
    // the switch's channel for the leg: its speech held until the test ends (no play-file-member-done)
    rooms.holdOnSwitch(leg, 'say');
    const text = 'never ended';
    const armed = boundedOnce(armings, 'set', 10_000, "the say's bound armed");
    const said = mix.announceTo(leg).say(text, {});
    const outcome = said.then(
      () => 'resolved',
      (e: Error) => e,
    );
    const ms = (await armed)[0] as number;
    expect(ms).to.equal(sayBoundMs(text));
    const e = await settledAtBound(outcome, ms, 'the say failed');
    expect(e).to.be.an.instanceOf(SayTimeout);
    expect((e as Error).message).to.match(/no play-file-member-done\) within 3000 ms/);
    expect(clock.pending(), 'nothing left armed').to.equal(0);
  });

  it("a customer's text that starts with #…# is spoken whole in the room's voice (the switch would take #<voice># as the voice)", async () => {
    const { mix, leg } = await member();
    const heard = rooms.saysOnSwitch(leg);
    await bounded(mix.announceTo(leg).say('#1 choice# is ours', {}), 15_000, 'the say ended by the switch');
    expect(heard).to.have.length(1);
    expect(heard[0]![0]).to.contain('#1 choice# is ours');
    expect(heard[0]![1]).to.equal('en-us');
  });

  it("a <Say> in a language of its own is saymember's #<voice>#, the customer's text whole; a voice with a space is refused before anything is sent", async () => {
    const { mix, leg } = await member();
    const heard = rooms.saysOnSwitch(leg);
    await bounded(mix.announceTo(leg).say('#1 choix# est le nôtre', { language: 'fr-FR' }), 15_000, 'the say ended by the switch');
    expect(heard).to.deep.equal([['#1 choix# est le nôtre', 'fr-fr']]);
    const bad = await mix
      .announceTo(leg)
      .say('hello', { voice: 'en us' })
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(bad?.message).to.match(/voice must be 1-64 of/);
    expect(heard, 'nothing sent for it').to.have.length(1);
  });

  it("a <Play> the switch ends: its bound (the file's length and 2 s) cleared, its file removed", async () => {
    const { mix, leg } = await member();
    const armed = boundedOnce(armings, 'set', 10_000, "the play's bound armed");
    await bounded(mix.announceTo(leg).play([rooms.url]), 15_000, 'the play ended by the switch');
    expect((await armed)[0], 'its delay').to.equal(3000);
    expect(clock.pending(), 'nothing left armed').to.equal(0);
    expect(left(), 'no file left in the shared directory').to.deep.equal([]);
  });

  it('a <Play> the switch never ends fails at its bound, not before; its file removed, nothing left armed', async () => {
    const { mix, leg } = await member();
    rooms.holdOnSwitch(leg, 'play');
    const armed = boundedOnce(armings, 'set', 10_000, "the play's bound armed");
    const outcome = mix
      .announceTo(leg)
      .play([rooms.url])
      .then(
        () => 'resolved',
        (e: Error) => e,
      );
    const ms = (await armed)[0] as number;
    expect(ms).to.equal(3000);
    expect(left(), 'the file is there while it plays').to.have.length(1);
    const e = await settledAtBound(outcome, ms, 'the play failed');
    expect(e).to.be.an.instanceOf(SayTimeout);
    expect(clock.pending(), 'nothing left armed').to.equal(0);
    expect(left(), 'no file left in the shared directory').to.deep.equal([]);
  });

  it("a <Play> ends at its own file's done: a late done of an earlier file to the member does not end it", async () => {
    const m = await member();
    const { mix, leg } = m;
    // 0.8 s of 700 Hz in the switch's sounds directory, played to the member first: the switch queues a
    // member's files, so the announcement's file plays after it, and this file's done comes meanwhile
    await rooms.playEarlier(m);
    const t0 = Date.now();
    await bounded(mix.announceTo(leg).play([rooms.url]), 15_000, 'the play ended by the switch');
    // its own 1 s file, queued behind the earlier one: not over within a second of the command
    expect(Date.now() - t0, "ended by its own file's done").to.be.at.least(950);
    expect(left(), 'no file left in the shared directory').to.deep.equal([]);
  });
});
