// Timers owned by the phase that armed them (media-app/call/phase-timers.ts), on a virtual clock: a
// phase's end clears its timers, entering the same phase keeps them, and nothing is armed after end().
import { expect } from 'chai';
import { PhaseTimers } from '../../media-app/call/phase-timers';
import { virtualTimers as virtualHost } from '../support/virtual-timers';

describe('PhaseTimers: a timer ends with the phase that armed it', () => {
  it('the setup phase timer (a dial timeout) is cleared by the move to up, the up one fires', () => {
    const host = virtualHost();
    const t = new PhaseTimers<'setup' | 'up'>('setup', host);
    const fired: string[] = [];
    t.after(60_000, () => fired.push('dial timeout'));
    host.advance(10_000);
    t.enter('up');
    t.after(3_600_000, () => fired.push('max duration'));
    host.advance(300_000);
    expect(fired).to.deep.equal([]);
    host.advance(3_600_000);
    expect(fired).to.deep.equal(['max duration']);
    expect(t.size).to.equal(0);
  });

  it('a timer fires in its phase; entering the same phase keeps it; cancel() clears it early', () => {
    const host = virtualHost();
    const t = new PhaseTimers<'a' | 'b'>('a', host);
    const fired: string[] = [];
    t.after(100, () => fired.push('kept'));
    const gone = t.after(100, () => fired.push('cancelled'));
    t.enter('a');
    gone.cancel();
    gone.cancel();
    host.advance(100);
    expect(fired).to.deep.equal(['kept']);
    expect(host.pending()).to.equal(0);
  });

  it('end() clears every timer and arms none after it', () => {
    const host = virtualHost();
    const t = new PhaseTimers<'a' | 'b'>('a', host);
    const fired: string[] = [];
    t.after(100, () => fired.push('a'));
    t.end();
    t.after(100, () => fired.push('after end'));
    t.enter('b');
    host.advance(1000);
    expect(fired).to.deep.equal([]);
    expect(host.pending()).to.equal(0);
    expect(t.phase).to.equal(null);
  });
});
