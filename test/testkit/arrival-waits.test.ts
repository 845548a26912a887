// testkit's ArrivalWaits and bounded waits: a failing check fails its own wait, never the process; a
// bounded wait names what it waited for.
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import { ArrivalWaits } from '../../testkit/arrival-waits';
import { bounded, boundedOnce } from '../../testkit/bounded';

describe('testkit: arrival waits and bounded waits', () => {
  it("a wait whose test throws at an arrival rejects with that error; the other waits go on, nothing is raised into the arrival's handler", async () => {
    const waits = new ArrivalWaits();
    const frames: number[][] = [];
    const bad = waits.until(
      () => {
        const f = frames.at(-1);
        if (f && f.length < 2) throw new Error('a short frame');
        return false;
      },
      5000,
      'never',
    );
    let seen = 0;
    const good = waits.until(() => ++seen >= 2, 5000, 'two arrivals');
    frames.push([1]);
    expect(() => waits.check(), 'the arrival handler').not.to.throw();
    const err = await bad.then(
      () => null,
      (e: Error) => e.message,
    );
    expect(err).to.equal('a short frame');
    waits.check();
    await good;
  });

  it('a test that throws at once rejects the wait (no throw from until)', async () => {
    const waits = new ArrivalWaits();
    let p: Promise<void> | undefined;
    expect(
      () =>
        (p = waits.until(
          () => {
            throw new Error('at once');
          },
          5000,
          'x',
        )),
    ).not.to.throw();
    expect(
      await p!.then(
        () => null,
        (e: Error) => e.message,
      ),
    ).to.equal('at once');
  });

  it('bounded and boundedOnce name what did not come, and give what came', async () => {
    expect(
      await bounded(new Promise(() => undefined), 20, 'the reply').then(
        () => null,
        (e: Error) => e.message,
      ),
    ).to.equal('the reply: not within 20 ms');
    expect(await bounded(Promise.resolve(7), 1000, 'seven')).to.equal(7);
    const e = new EventEmitter();
    const next = boundedOnce(e, 'frame', 1000, 'a frame');
    e.emit('frame', 1, 2);
    expect(await next).to.deep.equal([1, 2]);
    expect(
      await boundedOnce(e, 'frame', 20, 'a second frame').then(
        () => null,
        (x: Error) => x.message,
      ),
    ).to.equal('a second frame: not within 20 ms');
    expect(e.listenerCount('frame'), 'no listener left').to.equal(0);
  });
});
