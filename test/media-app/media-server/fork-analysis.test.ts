// The fsmrf backend's VAD tap and AMD run on an audio fork of the leg (media-app/media-server/fsmrf/
// amd-tap.ts ForkAnalysis). A fork released earlier whose stop failed, and whose end is reported late,
// must not end the tap now running on the next fork (review s44 #4); the leg ending while the VAD
// loads is said, not a tap that silently never runs. A fork that drops while the tap runs (the switch's
// connection lost) is replaced by a new fork of the leg, the turn in progress ended with its 'stop'; one
// that drops before it gave a frame, or whose replacement cannot open, or the third in a row to drop
// before a second of audio, ends the tap, said in the log. The forks here are the MediaFork interface over
// hand-fed frames (the switch's forks are tested in fsmrf-fork.test.ts); the classifiers are the
// engine's own (WebRTC VAD) on espeak-ng's speech.
import { expect } from 'chai';
import { ForkAnalysis } from '../../../media-app/media-server/fsmrf/amd-tap';
import { LegTaps } from '../../../media-app/media-server/fsmrf/leg-taps';
import type { FsmrfFork } from '../../../media-app/media-server/fsmrf/fork-tap';
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

  /** A ForkAnalysis over hand forks (`fails(n)`: the n-th open, from 0, rejects) with its events and warnings. */
  const rig = (fails: (n: number) => boolean = () => false) => {
    const forks: HandFork[] = [];
    const events: SpeechEvent[] = [];
    const warned: string[] = [];
    let opens = 0;
    const fa = new ForkAnalysis(
      async (o) => {
        if (fails(opens++)) throw new Error('the switch refused the fork');
        const f = handFork(o.onFrame!, false);
        forks.push(f);
        return f.fork;
      },
      (e) => events.push(e),
      { warn: (_o, msg) => warned.push(msg) },
    );
    return { fa, forks, events, warned, opens: () => opens };
  };
  const turns = (events: SpeechEvent[]) => events.map((e) => e.state);
  const settle = () => new Promise((r) => setImmediate(r));

  it("a fork that drops mid-turn: the turn ends with its 'stop' and a new fork of the leg feeds the tap", async () => {
    const { fa, forks, events, warned } = rig();
    await fa.vadStart({});
    const words = espeakSamples('hello there, I would like to check my balance');
    forks[0]!.feed(words.slice(0, Math.floor(words.length / 2)));
    expect(turns(events), 'in a turn').to.deep.equal(['start']);
    forks[0]!.end('connection dropped');
    await settle();
    expect(turns(events), 'the turn ended with the drop').to.deep.equal(['start', 'stop']);
    expect(forks, 'a new fork').to.have.lengthOf(2);
    expect(warned.join('\n')).to.match(/dropped.*new fork/);
    forks[1]!.feed(speech());
    expect(turns(events), 'the new fork feeds the tap').to.deep.equal(['start', 'stop', 'start', 'stop']);
    await fa.vadStop();
    fa.close();
  });

  it('a fork that drops before any frame is not replaced: the tap ends, said in the log; a later start opens a fork again', async () => {
    const { fa, forks, events, warned } = rig();
    await fa.vadStart({});
    forks[0]!.end('connection refused');
    await settle();
    expect(forks).to.have.lengthOf(1);
    expect(events).to.deep.equal([]);
    expect(warned.join('\n')).to.match(/VAD tap ends/);
    await fa.vadStart({});
    expect(forks, 'the next tap has a fork of its own').to.have.lengthOf(2);
    fa.close();
  });

  it('a switch that keeps dropping forks within a second of audio: the third short fork in a row ends the tap, said in the log', async () => {
    const { fa, forks, warned } = rig();
    await fa.vadStart({});
    const second = new Int16Array(8000); // 1 s of silence: 50 frames
    const drop = async (i: number, samples: Int16Array) => {
      forks[i]!.feed(samples);
      forks[i]!.end('connection dropped');
      await settle();
      await settle();
    };
    await drop(0, second.slice(0, 800)); // short (5 frames): replaced
    await drop(1, second.slice(0, 800)); // short: replaced
    await drop(2, second); // a whole second fed: replaced, the count starts again
    await drop(3, second.slice(0, 800));
    await drop(4, second.slice(0, 800));
    expect(forks, 'two short forks after a long one are replaced').to.have.lengthOf(6);
    expect(warned.join('\n')).to.not.match(/too many/);
    await drop(5, second.slice(0, 800)); // the third short fork in a row
    expect(forks, 'not opened again').to.have.lengthOf(6);
    expect(warned.at(-1)).to.match(/too many times in a row: the VAD tap ends/);
    await fa.vadStart({}); // the tap had ended (EBUSY if it still ran); a new tap counts from 0
    expect(forks).to.have.lengthOf(7);
    await drop(6, second.slice(0, 800));
    expect(forks, 'the new tap replaces its first short fork').to.have.lengthOf(8);
    fa.close();
  });

  it('a replacement fork that cannot open ends the tap, said in the log', async () => {
    const { fa, forks, warned, opens } = rig((n) => n === 1);
    await fa.vadStart({});
    forks[0]!.feed(speech().slice(0, 800));
    forks[0]!.end('connection dropped');
    await settle();
    await settle();
    expect(opens()).to.equal(2);
    expect(warned.join('\n')).to.match(/could not open.*VAD tap ends/);
    await fa.vadStart({}); // the tap had ended: a new one starts (EBUSY if the old one still ran)
    expect(forks).to.have.lengthOf(2);
    fa.close();
  });

  it('a replacement that fails after its tap was stopped and a new one started leaves the new tap running', async () => {
    const forks: HandFork[] = [];
    const events: SpeechEvent[] = [];
    let failReplacement: (e: Error) => void = () => undefined;
    let opens = 0;
    const fa = new ForkAnalysis(
      (o) => {
        // the second open (the replacement) hangs until the test fails it
        if (opens++ === 1) return new Promise<MediaFork>((_r, reject) => (failReplacement = reject));
        const f = handFork(o.onFrame!, false);
        forks.push(f);
        return Promise.resolve(f.fork);
      },
      (e) => events.push(e),
    );
    await fa.vadStart({});
    forks[0]!.feed(speech().slice(0, 800));
    forks[0]!.end('connection dropped');
    await settle();
    expect(opens, 'the replacement is opening').to.equal(2);
    // its owner stops the tap without waiting (a gather ended) and the next gather starts one
    void fa.vadStop();
    const next = fa.vadStart({});
    failReplacement(new Error('the switch refused the fork'));
    await next;
    expect(forks, "the new tap's fork").to.have.lengthOf(2);
    forks[1]!.feed(speech());
    expect(turns(events), 'the new tap hears').to.include('start');
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

  it('a transcriptionError listener that throws when the transcription fork drops: said in the log, never an unhandled rejection', async () => {
    let drop: (why: string) => void = () => undefined;
    const warned: string[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.prependListener('unhandledRejection', onUnhandled);
    try {
      const taps = new LegTaps(
        async (o) => {
          const f = handFork(o.onFrame!, false);
          drop = f.end;
          return f.fork as unknown as FsmrfFork;
        },
        {
          speech: () => undefined,
          transcript: () => undefined,
          transcriptionError: () => {
            throw new Error('listener failed');
          },
        },
        { warn: (_o, msg) => warned.push(msg) },
      );
      await taps.transcribeStart({ direction: 'in' });
      drop('connection dropped');
      await settle();
      await settle();
      expect(warned).to.deep.equal(['the end of the audio fork of live transcription failed']);
      await taps.transcribeStop();
    } finally {
      await settle();
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).to.deep.equal([]);
  });

  it("a leg's forks each have one owner (LegTaps): the owner's forkStop leaves the VAD tap and transcription running; a dropped transcription fork is said", async () => {
    const opened: { mix: string; fork: HandFork; stopped: boolean }[] = [];
    const errors: Error[] = [];
    const taps = new LegTaps(
      async (o) => {
        const f = handFork(o.onFrame!, false);
        const entry = { mix: String(o.mix), fork: f, stopped: false };
        const stop = f.fork.stop;
        f.fork.stop = () => ((entry.stopped = true), stop());
        opened.push(entry);
        return f.fork as unknown as FsmrfFork;
      },
      { speech: () => undefined, transcript: () => undefined, transcriptionError: (e) => errors.push(e) },
      { warn: () => undefined },
    );
    await taps.forkStart({ mix: 'both', onFrame: () => undefined });
    await taps.vadStart({});
    await taps.transcribeStart({ direction: 'in' });
    expect(opened.map((o) => o.mix)).to.deep.equal(['both', 'in', 'in']);
    await taps.forkStop();
    expect(
      opened.map((o) => o.stopped),
      "only the owner's fork",
    ).to.deep.equal([true, false, false]);
    opened[2]!.fork.end('connection dropped');
    await settle();
    expect(errors.map((e) => e.message)).to.deep.equal(['the audio fork of live transcription (in) ended: connection dropped']);
    taps.close();
    await settle();
    expect(
      opened.map((o) => o.stopped),
      "the leg's end stops the rest",
    ).to.deep.equal([true, true, true]);
  });
});
