// The participant status callbacks of a conference (<Conference statusCallbackEvent="join leave mute
// hold">) as the suites that mute, hold and release one participant receive them.
import { expect } from 'chai';
import type { TwimlRequest } from './server';

/** The six callbacks of join, mute, unmute, hold, unhold, leave, in order, numbered 1 to 6, each signed and carrying `params`. */
export function expectParticipantLifecycle(got: readonly TwimlRequest[], params: Record<string, string>): void {
  const seen = got.map((r) => [r.params.StatusCallbackEvent, r.params.Muted, r.params.Hold]);
  expect(seen, JSON.stringify(got.map((r, i) => [r.params.SequenceNumber, ...seen[i]!]))).to.deep.equal([
    ['participant-join', 'false', 'false'],
    ['participant-mute', 'true', 'false'],
    ['participant-unmute', 'false', 'false'],
    ['participant-hold', 'false', 'true'],
    ['participant-unhold', 'false', 'false'],
    ['participant-leave', 'false', 'false'],
  ]);
  expect(got.map((r) => Number(r.params.SequenceNumber))).to.deep.equal([1, 2, 3, 4, 5, 6]);
  for (const r of got) {
    expect(r.signed, `${r.params.StatusCallbackEvent} signed`).to.equal(true);
    expect(r.params).to.include(params);
  }
}
