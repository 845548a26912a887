// The lease renewal (evals/lease-renewal.ts) on virtual timers: one timer at most, whatever order the
// worker's carry (ensure) and drop (stop) come in while a renewal is in flight.
import { expect } from 'chai';
import { LeaseRenewal, type RenewalTimers } from '../../evals/lease-renewal';

class FakeTimers implements RenewalTimers {
  readonly armed = new Map<number, () => void>();
  private next = 1;
  set(fn: () => void): unknown {
    const h = this.next++;
    this.armed.set(h, fn);
    return h;
  }
  clear(h: unknown): void {
    this.armed.delete(h as number);
  }
  /** Fires every timer armed now. */
  fireAll(): void {
    const due = [...this.armed];
    this.armed.clear();
    for (const [, fn] of due) fn();
  }
}

/** A renewOnce whose every call waits until the test lets it end. */
function heldRenewals() {
  const pending: (() => void)[] = [];
  let calls = 0;
  return {
    renewOnce: () => {
      calls++;
      return new Promise<void>((r) => pending.push(r));
    },
    release: async () => {
      for (const r of pending.splice(0)) r();
      await new Promise<void>((r) => setImmediate(r));
    },
    get calls() {
      return calls;
    },
  };
}

describe('evals: the lease renewal', () => {
  it('renews every period while carried, and stops when told', async () => {
    const timers = new FakeTimers();
    const held = heldRenewals();
    const r = new LeaseRenewal(200, held.renewOnce, timers);
    r.ensure();
    r.ensure();
    expect(timers.armed.size).to.equal(1);
    timers.fireAll();
    await held.release();
    expect(held.calls).to.equal(1);
    expect(timers.armed.size).to.equal(1);
    r.stop();
    expect(timers.armed.size).to.equal(0);
  });

  it('runs dropped and a new one carried during a renewal leave one timer, not two chains', async () => {
    const timers = new FakeTimers();
    const held = heldRenewals();
    const r = new LeaseRenewal(200, held.renewOnce, timers);
    r.ensure();
    timers.fireAll(); // a renewal in flight
    r.stop(); // every run ended meanwhile
    r.ensure(); // and a new one was claimed
    await held.release();
    expect(timers.armed.size).to.equal(1);
    // and it stays one: each firing arms exactly the next
    for (let i = 0; i < 3; i++) {
      timers.fireAll();
      await held.release();
      expect(timers.armed.size).to.equal(1);
    }
  });

  it('a stop during a renewal leaves no timer once it ends', async () => {
    const timers = new FakeTimers();
    const held = heldRenewals();
    const r = new LeaseRenewal(200, held.renewOnce, timers);
    r.ensure();
    timers.fireAll();
    r.stop();
    await held.release();
    expect(timers.armed.size).to.equal(0);
  });
});
