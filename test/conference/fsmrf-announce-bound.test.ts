// A member's announcement on the fsmrf backend (media-app/media-server/fsmrf/conference-say.ts, MemberSay)
// has a bound of its own: a timer armed once the switch took the room's `play`, on the backend's timers
// (here virtual ones: they fire when the test moves time on), of the file's length and 2 s. Against our
// switch (testkit/esl/fsmrf-rooms.ts, real on loopback): a step the switch ends (play-file-member-done)
// clears its timer; a switch that never ends it (here the member's file held in the switch) fails the step
// at the bound, not before, and leaves nothing armed. A <Play>'s file is fetched by media-app through its
// egress policy into the directory shared with the switch (shared-prompts.ts; a real HTTP server on
// loopback, allowed by the policy); a <Say>'s is synthesised by media-app with the platform's voices (the
// engine's TTS, the prompts' cache in the rooms' shared directory, so the test knows the speech's length);
// each removed whether the switch ended it or the bound did.
import { expect } from 'chai';
import path from 'node:path';
import { PLAY_SLACK_MS, SayTimeout } from '../../media-app/media-server/fsmrf/conference-say';
import { createTtsProvider } from '../../media-engine';
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
  /** The bound of a <Say> of `text`: its speech's length (the cache the backend's prompts use) and the slack. */
  const sayBoundMs = async (text: string) => (await createTtsProvider('espeak-ng', { cacheDir: path.join(rooms.shared, 'cache', 'tts') }).synthesize(text, { ssml: false })).durationMs + PLAY_SLACK_MS;

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
    expect((await armed)[0], 'its delay').to.equal(await sayBoundMs(text));
    expect(clock.pending(), 'nothing left armed').to.equal(0);
    expect(left(), 'no file left in the shared directory').to.deep.equal([]);
  });

  it('a switch that never ends it: the say fails at its bound, not before, its file removed, and nothing is left armed', async () => {
    const { mix, leg } = await member();
    // the switch's channel for the leg: its file held until the test ends (no play-file-member-done)
    rooms.holdOnSwitch(leg, 'play');
    const text = 'never ended';
    const armed = boundedOnce(armings, 'set', 10_000, "the say's bound armed");
    const said = mix.announceTo(leg).say(text, {});
    const outcome = said.then(
      () => 'resolved',
      (e: Error) => e,
    );
    const ms = (await armed)[0] as number;
    expect(ms).to.equal(await sayBoundMs(text));
    expect(left(), 'the file is there while it plays').to.have.length(1);
    const e = await settledAtBound(outcome, ms, 'the say failed');
    expect(e).to.be.an.instanceOf(SayTimeout);
    expect((e as Error).message).to.match(new RegExp(`no play-file-member-done\\) within ${ms} ms`));
    expect(clock.pending(), 'nothing left armed').to.equal(0);
    expect(left(), 'no file left in the shared directory').to.deep.equal([]);
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
