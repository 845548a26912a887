// A prompt to a leg in a switch room (fsmrf/room-app.ts), against our switch (testkit/esl/switch-rig.ts, all real on
// loopback). The switch runs a sendmsg'd application only after the member's `conference` application,
// so music played to a member (a hold's) would wait until it left the room, never heard in it. The leg
// refuses such a prompt, decided in the same step as the send: a join and a play asked at once never
// both go ahead (the play asked after the join is refused at once; a join asked after a play runs after
// its file), and once out of the room the leg plays again.
import { expect } from 'chai';
import { MediaBackendUnsupported } from '../../../media-app/media-server/port';
import { RoomApp } from '../../../media-app/media-server/fsmrf/room-app';
import { until } from '../../../testkit/media-app/harness';
import { useFsmrfSuite } from '../../../testkit/esl/fsmrf-suite';
import { bounded } from '../../../testkit/bounded';

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

describe('media-app fsmrf backend: a prompt to a leg in a switch room', function () {
  this.timeout(60_000);
  const suite = useFsmrfSuite();

  it('a play asked right after the join is refused at once (not held back until the leg leaves); out of the room it plays again', async () => {
    const a = await suite.call();
    const b = await suite.call();
    const mix = await suite.backend.createMix(`room-prompt-${Date.now()}`);
    try {
      await mix.join(b.leg);
      expect(a.leg.promptRefusal(), 'out of any room').to.equal(null);
      // the hold's music on a call whose join went first: the same tick, no await between them
      const joining = mix.join(a.leg);
      const err = await bounded(rejection(a.leg.play('silence_stream://10000')), 2000, 'the play to a member');
      expect(err).to.be.instanceOf(MediaBackendUnsupported);
      expect((err as Error).message).to.match(/a prompt or music to a leg in a switch room .*fsmrf media backend/);
      await joining;
      expect(await bounded(rejection(a.leg.say('hello')), 2000, 'the speech to a member')).to.be.instanceOf(MediaBackendUnsupported);

      await mix.leave(a.leg);
      // the conference application's end comes on the leg's channel events, after the kick's answer
      await until(() => a.leg.promptRefusal() === null, 5000, 'out of the room');
      const r = await bounded(a.leg.play('silence_stream://200'), 5000, 'the play out of the room');
      expect(r.interrupted).to.equal(false);
      await mix.leave(b.leg);
    } finally {
      await mix.destroy();
    }
  });

  it('a join asked right after a play runs after its file: the play is not refused', async () => {
    const a = await suite.call();
    const mix = await suite.backend.createMix(`room-prompt-after-${Date.now()}`);
    try {
      const played = a.leg.play('silence_stream://300');
      const joining = mix.join(a.leg);
      const r = await bounded(played, 5000, 'the play sent before the join');
      expect(r.interrupted).to.equal(false);
      expect(r.playbackMilliseconds, 'played whole').to.be.at.least(250);
      await bounded(joining, 5000, 'the join after the file');
      expect(a.leg.promptRefusal()).to.be.instanceOf(MediaBackendUnsupported);
      await mix.leave(a.leg);
    } finally {
      await mix.destroy();
    }
  });

  it('a join whose send fails before the switch starts its application does not leave the leg refusing prompts; a real join after it counts until it completes', async () => {
    const a = await suite.call();
    const room = new RoomApp(a.leg.fs);
    try {
      // what fsmrf's join or the leg's socket rejects with before any sendmsg went (the channel socket gone, a refused argument)
      const failed = room.join(() => Promise.reject(new Error('the join could not be sent')));
      expect(room.refusal(), 'while the join is being sent').to.be.instanceOf(MediaBackendUnsupported);
      expect(((await rejection(failed)) as Error).message).to.equal('the join could not be sent');
      expect(room.refusal(), 'no application started: no room').to.equal(null);

      // a room of the switch's own making (the conference application makes it at the first member)
      await bounded(
        room.join(() => a.leg.fs.join(`room-app-${Date.now()}`)),
        5000,
        'a join on the switch',
      );
      expect(room.refusal(), 'in the room').to.be.instanceOf(MediaBackendUnsupported);
      await a.leg.fs.confKick();
      await until(() => room.refusal() === null, 5000, 'out of the room once its application completed');
    } finally {
      room.close();
    }
  });
});
