// The 'out' fork of a speech-to-speech session (media-app/ai/out-fork.ts) on a real media-engine
// endpoint: a fork that finishes opening after the session ended or the caller barged in is stopped,
// never kept on the call's endpoint. The opening is held at a gate so the order is the test's, not
// the worker's.
import { expect } from 'chai';
import type { AudioFork, Endpoint } from '../../media-engine';
import { OutFork } from '../../media-app/ai/out-fork';
import { usePcmuLeg } from '../../testkit/media-engine/support';

describe("ai: the model's out fork (opened, dropped, closed)", function () {
  this.timeout(20_000);
  let ep: Endpoint;
  usePcmuLeg((e) => (ep = e));

  /**
   * An OutFork whose openings wait for `release()`; `opened` lists every fork the endpoint started and
   * `nextOpen()` resolves when the next one has.
   */
  function gated() {
    const opened: AudioFork[] = [];
    let release: () => void = () => undefined;
    let onOpen: () => void = () => undefined;
    const out = new OutFork(async () => {
      const f = await ep.forkAudioStart({ mix: 'out', onFrame: () => undefined, maxInFlight: 50 });
      opened.push(f);
      onOpen();
      await new Promise<void>((r) => (release = r));
      return f;
    });
    const nextOpen = () => new Promise<void>((r) => (onOpen = r));
    return { out, opened, nextOpen, release: () => release() };
  }

  it('closed while opening: the fork that opens is stopped and not handed out', async () => {
    const g = gated();
    const opening = g.nextOpen();
    const got = g.out.get();
    await opening;
    g.out.close();
    g.release();
    expect(await got).to.equal(null);
    expect(await g.opened[0]!.stop(), 'stopped already (a second stop has no stats)').to.equal(null);
    expect(await g.out.get(), 'nothing opens after the end').to.equal(null);
    expect(g.opened).to.have.length(1);
  });

  it('dropped while opening (barge-in): that fork is stopped, the next audio opens a new one and keeps it', async () => {
    const g = gated();
    let opening = g.nextOpen();
    const first = g.out.get();
    await opening;
    g.out.drop();
    g.release();
    expect(await first).to.equal(null);
    expect(await g.opened[0]!.stop()).to.equal(null);
    opening = g.nextOpen();
    const second = g.out.get();
    await opening;
    g.release();
    const f = await second;
    expect(f).to.equal(g.opened[1]);
    expect(await g.out.get(), 'kept while the session runs').to.equal(f);
    g.out.close();
    expect(await f!.stop(), 'closing stopped it').to.equal(null);
  });

  it('a failed opening is not kept: the next audio tries again', async () => {
    let tries = 0;
    const out = new OutFork(async () => {
      if (++tries === 1) throw new Error('fork refused');
      return ep.forkAudioStart({ mix: 'out', onFrame: () => undefined });
    });
    await out.get().then(
      () => expect.fail('the first opening fails'),
      (e: Error) => expect(e.message).to.equal('fork refused'),
    );
    const f = await out.get();
    expect(f).to.not.equal(null);
    out.close();
    expect(await f!.stop()).to.equal(null);
  });
});
