// The transaction layer's coarse timers (clean-up timers of 5 s and more share one interval):
// each fires once, no earlier than asked and at most about a grain late; a cancelled one never
// fires; the interval runs only while a timer waits; one set from inside a firing callback fires too.
import { expect } from 'chai';
import { CoarseTimers, COARSE_FROM_MS, TimerSet, coarse } from '../../../sip-server/transaction/context';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('sip-server: coarse transaction timers', () => {
  it('fires each timer once, not early and within a grain (plus scheduling slack) of its time', async () => {
    const c = new CoarseTimers(20);
    const t0 = performance.now();
    const fired: { ms: number; at: number }[] = [];
    for (const ms of [60, 100, 100, 150]) c.add(ms, () => fired.push({ ms, at: performance.now() - t0 }));
    expect(c.size).to.equal(4);
    expect(c.active).to.equal(true);
    await sleep(400);
    expect(fired.map((f) => f.ms)).to.deep.equal([60, 100, 100, 150]);
    for (const f of fired) {
      expect(f.at, `timer of ${f.ms} ms`).to.be.at.least(f.ms - 1);
      expect(f.at, `timer of ${f.ms} ms`).to.be.below(f.ms + 20 + 150);
    }
    expect(c.size).to.equal(0);
    expect(c.active, 'the interval stops when nothing waits').to.equal(false);
  });

  it('never fires a cancelled timer; cancelling the last one stops the interval', async () => {
    const c = new CoarseTimers(20);
    let n = 0;
    const a = c.add(40, () => n++);
    const b = c.add(40, () => n++);
    c.cancel(a);
    c.cancel(a); // twice is harmless
    expect(c.size).to.equal(1);
    await sleep(150);
    expect(n).to.equal(1);
    c.cancel(b); // already run
    expect(c.size).to.equal(0);
    const d = c.add(1000, () => n++);
    c.cancel(d);
    expect(c.active).to.equal(false);
    await sleep(60);
    expect(n).to.equal(1);
  });

  it('runs a timer set from inside a firing callback, with one interval', async () => {
    const c = new CoarseTimers(20);
    const order: string[] = [];
    c.add(30, () => {
      order.push('first');
      c.add(40, () => order.push('second'));
    });
    await sleep(250);
    expect(order).to.deep.equal(['first', 'second']);
    expect(c.active).to.equal(false);
  });

  it('a TimerSet puts timers of 5 s and more on the coarse timers, shorter ones on their own, and clears both', () => {
    const before = coarse.size;
    const s = new TimerSet();
    s.start('J', COARSE_FROM_MS * 6.4, () => undefined);
    s.start('E', 500, () => undefined);
    expect(coarse.size).to.equal(before + 1);
    expect(s.has('J') && s.has('E')).to.equal(true);
    s.start('J', COARSE_FROM_MS, () => undefined); // restarted: the old one is cancelled
    expect(coarse.size).to.equal(before + 1);
    s.stop('J');
    expect(coarse.size).to.equal(before);
    s.start('L', COARSE_FROM_MS * 6.4, () => undefined);
    s.clear();
    expect(coarse.size).to.equal(before);
    expect(s.has('L') || s.has('E')).to.equal(false);
  });
});
