// Timers owned by the phase that armed them (media-app/call/phase-timers.ts), on a virtual clock: a
// phase's end clears its timers, entering the same phase keeps them, and nothing is armed after end().
import { expect } from 'chai';
import { PhaseTimers, type TimerHost } from '../../media-app/call/phase-timers';

/** A virtual clock: timers fire only when the test moves time on. */
function virtualHost(): TimerHost & { advance(ms: number): void; pending(): number } {
  let now = 0;
  let seq = 0;
  const due = new Map<number, { at: number; fn: () => void }>();
  return {
    set(ms, fn) {
      due.set(++seq, { at: now + ms, fn });
      return seq;
    },
    clear: (h) => void due.delete(h as number),
    advance(ms) {
      const end = now + ms;
      for (;;) {
        const next = [...due.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
        if (!next) break;
        due.delete(next[0]);
        now = next[1].at;
        next[1].fn();
      }
      now = end;
    },
    pending: () => due.size,
  };
}

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
