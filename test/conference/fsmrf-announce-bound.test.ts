// A member's announcement on the fsmrf backend (media-app/media-server/fsmrf/conference-say.ts, MemberSay)
// has a bound of its own: a timer armed once the switch took `saymember`, on the backend's timers (here
// virtual ones: they fire when the test moves time on). Against our switch (test/esl/rig.ts, real on
// loopback): a say the switch ends (play-file-member-done) clears its timer; a switch that never ends it
// (here the member's speech held in the switch, as a real FreeSWITCH whose profile has no TTS queues
// nothing) fails the say at the bound, not before, and leaves nothing armed.
import { expect } from 'chai';
import type { FsmrfMix } from '../../media-app/media-server/fsmrf/conference';
import { SayTimeout, sayBoundMs } from '../../media-app/media-server/fsmrf/conference-say';
import { boundedOnce, bounded } from '../../testkit/bounded';
import { useFsmrfSuite } from '../media-app/media-server/fsmrf-suite';
import { watchedTimers } from '../support/virtual-timers';

describe('fsmrf conference announcement: the bound of a member say', function () {
  this.timeout(30_000);
  const { clock, armings, timers } = watchedTimers();
  const suite = useFsmrfSuite({ connect: { timers } });
  const undo: (() => void)[] = [];
  const rooms: FsmrfMix[] = [];
  let seq = 0;
  afterEach(async () => {
    for (const u of undo.splice(0)) u();
    for (const r of rooms.splice(0)) await r.destroy().catch(() => undefined);
  });

  async function member() {
    const mix = await suite.backend.createMix(`saybound${process.pid}x${++seq}`);
    rooms.push(mix);
    const { leg } = await suite.call();
    await mix.join(leg);
    return { mix, leg };
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
    const engineEp = suite.rig.esl.channels.get(leg.fs.uuid)!.channel.endpoint;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const real = engineEp.say.bind(engineEp);
    engineEp.say = async (...args) => {
      await held;
      return real(...args);
    };
    undo.push(() => {
      delete (engineEp as { say?: unknown }).say;
      release();
    });
    const text = 'never ended';
    const armed = boundedOnce(armings, 'set', 10_000, "the say's bound armed");
    const said = mix.announceTo(leg).say(text, {});
    const outcome = said.then(
      () => 'resolved',
      (e: Error) => e,
    );
    const ms = (await armed)[0] as number;
    expect(ms).to.equal(sayBoundMs(text));
    clock.advance(ms - 1);
    const early = await Promise.race([outcome, new Promise((r) => setImmediate(() => r('pending')))]);
    expect(early, 'not before its bound').to.equal('pending');
    clock.advance(1);
    const e = await bounded(outcome, 5000, 'the say failed');
    expect(e).to.be.an.instanceOf(SayTimeout);
    expect((e as Error).message).to.match(/no play-file-member-done\) within 3000 ms/);
    expect(clock.pending(), 'nothing left armed').to.equal(0);
  });

  it("a customer's text that starts with #…# is spoken whole in the room's voice (the switch would take #<voice># as the voice)", async () => {
    const { mix, leg } = await member();
    const engineEp = suite.rig.esl.channels.get(leg.fs.uuid)!.channel.endpoint;
    const heard: [string, string | undefined][] = [];
    const real = engineEp.say.bind(engineEp);
    engineEp.say = async (text, opts) => {
      heard.push([text, opts?.voice]);
      return real(text, opts);
    };
    undo.push(() => delete (engineEp as { say?: unknown }).say);
    await bounded(mix.announceTo(leg).say('#1 choice# is ours', {}), 15_000, 'the say ended by the switch');
    expect(heard).to.have.length(1);
    expect(heard[0]![0]).to.contain('#1 choice# is ours');
    expect(heard[0]![1]).to.equal('en-us');
  });
});
