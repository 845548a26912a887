// A media worker's fork registry (media-engine/worker/engine-forks.ts) on a real Engine: a fork's owner
// going (a leg destroyed, a conference destroyed) closes its taps, which frees their resamplers at once
// rather than when the collector finds them, and forgets the forks (a later forkStop finds none).
import { expect } from 'chai';
import type { ForkTap } from '../../media-engine/fork';
import { Engine } from '../../media-engine/worker/engine';
import type { ConferenceState } from '../../media-engine/worker/conference-fork';

/** Counts the closes of a tap (the real close still runs). */
function countCloses(tap: ForkTap): { n: number } {
  const seen = { n: 0 };
  const close = tap.close.bind(tap);
  tap.close = () => {
    seen.n++;
    close();
  };
  return seen;
}

describe('media-engine: the forks of a worker', () => {
  let engine: Engine;
  beforeEach(() => {
    engine = new Engine(
      () => undefined,
      () => undefined,
    );
  });
  afterEach(() => engine.shutdown());

  it("a destroyed conference closes its forks' taps and forgets them", () => {
    engine.createConference('c1');
    expect(engine.forkStart('c1', 'f1', 'both', 50, true)).to.equal(8000);
    const conf = (engine as unknown as { conferences: Map<string, ConferenceState> }).conferences.get('c1')!;
    const closes = countCloses(conf.forks.get('f1')!);
    engine.destroyConference('c1');
    expect(closes.n).to.equal(1);
    expect(engine.forkStop('f1')).to.equal(null);
  });

  it('a stopped fork is closed once and leaves its conference', () => {
    engine.createConference('c2');
    engine.forkStart('c2', 'f2');
    const conf = (engine as unknown as { conferences: Map<string, ConferenceState> }).conferences.get('c2')!;
    const closes = countCloses(conf.forks.get('f2')!);
    expect(engine.conferenceMembers('c2')).to.deep.equal(['fork:f2']);
    expect(engine.forkStop('f2')).to.deep.equal({ sent: 0, dropped: 0, injected: 0 });
    expect(closes.n).to.equal(1);
    expect(conf.forks.size).to.equal(0);
    expect(engine.forkStop('f2'), 'a second stop finds nothing').to.equal(null);
    engine.destroyConference('c2');
    expect(closes.n, 'not closed again with its conference').to.equal(1);
  });
});
