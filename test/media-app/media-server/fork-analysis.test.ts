// The fsmrf backend's VAD tap and AMD run on an audio fork of the leg (media-app/media-server/fsmrf/
// amd-tap.ts ForkAnalysis). A fork released earlier whose stop failed, and whose end is reported late,
// must not end the tap now running on the next fork (review s44 #4); the leg ending while the VAD
// loads is said, not a tap that silently never runs. The forks here are the MediaFork interface over
// hand-fed frames (the switch's forks are tested in fsmrf-fork.test.ts); the classifiers are the
// engine's own (WebRTC VAD) on espeak-ng's speech.
import { expect } from 'chai';
import { ForkAnalysis } from '../../../media-app/media-server/fsmrf/amd-tap';
import type { MediaFork } from '../../../media-app/media-server/tap';
import type { SpeechEvent } from '../../../media-engine';
import { espeakSamples } from '../../../testkit/speech/phrase-recogniser';

interface HandFork {
  fork: MediaFork;
  feed: (samples: Int16Array) => void;
  end: (why: string) => void;
}

/** A fork whose frames the test feeds and whose end it reports; its stop fails when `stopFails`. */
function handFork(onFrame: (f: Int16Array) => unknown, stopFails: boolean): HandFork {
  let end: (why: string) => void = () => undefined;
  const ended = new Promise<string>((r) => (end = r));
  const fork: MediaFork = {
    rate: 8000,
    inject: () => undefined,
    clearInjected: async () => undefined,
    nextStart: async () => null,
    stop: async () => {
      if (stopFails) throw new Error('the switch did not answer');
      end('stopped');
      return null;
    },
    ended,
  };
  const feed = (samples: Int16Array) => {
    for (let i = 0; i + 160 <= samples.length; i += 160) void onFrame(samples.slice(i, i + 160));
  };
  return { fork, feed, end };
}

describe('media-app fsmrf: the VAD tap on forks of the leg (ForkAnalysis)', () => {
  const speech = () => {
    const s = espeakSamples('hello there, I would like to check my balance');
    const out = new Int16Array(s.length + 8000 * 2); // the words, then 2 s of silence
    out.set(s);
    return out;
  };

  it("a released fork's late end leaves the tap on the next fork running", async () => {
    const forks: HandFork[] = [];
    const events: SpeechEvent[] = [];
    const fa = new ForkAnalysis(
      async (o) => {
        const f = handFork(o.onFrame!, forks.length === 0);
        forks.push(f);
        return f.fork;
      },
      (e) => events.push(e),
    );
    await fa.vadStart({});
    await fa.vadStop(); // the first fork's stop fails: its end is not reported yet
    await fa.vadStart({});
    expect(forks).to.have.lengthOf(2);
    forks[0]!.end('connection dropped'); // the first fork's end, late
    await new Promise((r) => setImmediate(r));
    forks[1]!.feed(speech());
    expect(
      events.map((e) => e.state),
      'the second fork still feeds the tap',
    ).to.include('start');
    fa.close();
  });

  it('the leg ending while the VAD loads rejects vadStart (ECANCELED) instead of resolving without a tap', async () => {
    const fa = new ForkAnalysis(async (o) => handFork(o.onFrame!, false).fork);
    const started = fa.vadStart({});
    fa.close();
    const err = await started.then(
      () => null,
      (e: Error & { code?: string }) => e,
    );
    expect(err?.code).to.equal('ECANCELED');
  });
});
