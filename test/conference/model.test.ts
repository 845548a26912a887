import { expect } from 'chai';
import { conferencePredecessors, conferencecallPredecessors, isPresent, normalizeTimeout, timeoutAt } from '../../core/conferences/model';

describe('conference model', () => {
  it('timeouts: 0 none, 1–59 a day, 60 and more as given; counted from creation', () => {
    expect([0, -5, 1, 59, 60, 3600].map(normalizeTimeout)).to.deep.equal([0, 0, 86_400, 86_400, 60, 3600]);
    const tm = new Date('2026-01-01T00:00:00Z');
    expect(timeoutAt({ timeout: 0, tm_create: tm })).to.equal(null);
    expect(timeoutAt({ timeout: 90, tm_create: tm })!.toISOString()).to.equal('2026-01-01T00:01:30.000Z');
  });

  it('states only move forward', () => {
    expect(conferencePredecessors('starting')).to.deep.equal([]);
    expect(conferencePredecessors('progressing')).to.deep.equal(['starting']);
    expect(conferencePredecessors('terminating')).to.not.include('terminated');
    expect(conferencecallPredecessors('joined')).to.deep.equal(['joining']);
    expect(conferencecallPredecessors('leaving')).to.have.members(['joining', 'joined']);
    expect(conferencecallPredecessors('leaved')).to.not.include('leaved');
    expect(['joining', 'joined', 'leaving', 'leaved'].map((s) => isPresent(s as never))).to.deep.equal([true, true, false, false]);
  });
});
