// A leg's own mute while it is a member of a room on the switch (fsmrf/member-mute.ts), against our
// switch (testkit/esl/switch-rig.ts, all real on loopback). The switch runs a sendmsg'd application (set_mute) only
// after the member's `conference` application, so a set_mute there waited until the member left; the mute
// is the room's member operation instead: it resolves at once and the other member stops hearing it. The
// room's member flags go when the member leaves, so the mute wanted then is written again on the channel (uuid_audio).
import path from 'node:path';
import { expect } from 'chai';
import { readWav } from '../../../testkit/media-engine/support';
import { toneShare } from '../../../testkit/media-engine/far-end';
import { until } from '../../../testkit/media-app/harness';
import { useFsmrfSuite, type FsmrfSuite } from '../../../testkit/esl/fsmrf-suite';
import { bounded } from '../../../testkit/bounded';

/** What `b`'s far end hears while `a`'s far end plays 440 Hz for 800 ms: the share of it carrying the tone. */
async function heard(suite: FsmrfSuite, a: Awaited<ReturnType<FsmrfSuite['call']>>, b: Awaited<ReturnType<FsmrfSuite['call']>>, name: string): Promise<number> {
  const file = path.join(suite.dir, `${name}.wav`);
  const rec = await b.peer.startRecord(file);
  await a.peer.play('tone_stream://%(800,0,440)');
  await b.peer.stopRecord(file);
  await rec.done;
  return toneShare(readWav(file).samples, 440, 8000);
}

describe('media-app fsmrf backend: a member of a switch room muted through its own leg', function () {
  this.timeout(60_000);
  const suite = useFsmrfSuite();

  it('mute("in") resolves at once and the other member stops hearing it; unmute restores it; the room is left as usual', async () => {
    const a = await suite.call();
    const b = await suite.call();
    const mix = await suite.backend.createMix(`member-mute-${Date.now()}`);
    try {
      await mix.join(a.leg);
      await mix.join(b.leg);
      expect(await heard(suite, a, b, 'before'), 'b hears a in the room').to.be.above(0.5);

      await bounded(a.leg.mute('in'), 2000, "the leg's mute in the room");
      expect(await heard(suite, a, b, 'muted'), 'b does not hear muted a').to.be.below(0.1);

      await bounded(a.leg.unmute('in'), 2000, "the leg's unmute in the room");
      expect(await heard(suite, a, b, 'unmuted'), 'b hears a again').to.be.above(0.5);

      await mix.leave(a.leg);
      await mix.leave(b.leg);
    } finally {
      await mix.destroy();
    }
  });

  it('muted in the room, then out of it: the leg stays muted (written again on the channel) until unmuted', async () => {
    const a = await suite.call();
    const b = await suite.call();
    const c = await suite.call();
    const mix = await suite.backend.createMix(`member-left-${Date.now()}`);
    try {
      await mix.join(a.leg);
      await mix.join(b.leg);
      await bounded(a.leg.mute('in'), 2000, "the leg's mute in the room");
      await mix.leave(a.leg);
      // out of the room (its conference application returned) and bridged: c must not hear a. The
      // set_mute follows the conference application's end on the channel's own events, so what c hears is
      // measured until it is silent (each measure 800 ms of tone; without the set_mute it never is)
      await a.leg.bridge(c.leg);
      let n = 0;
      await until(async () => (await heard(suite, a, c, `left-${++n}`)) < 0.1, 8000, 'c not hearing a, muted out of the room');
      await a.leg.unmute('in');
      expect(await heard(suite, a, c, 'left-unmuted'), 'c hears a once unmuted').to.be.above(0.5);
      await a.leg.unbridge();
      await mix.leave(b.leg);
    } finally {
      await mix.destroy();
    }
  });
});
