// The goal caller's goal_reached arguments (evals/goal-caller.ts goalEnd): only `reached: true` is a goal
// reached; arguments without it, with another value, or not JSON at all end the call as not reached, and
// arguments that are not JSON say so in the reason with their first 100 characters.
import { expect } from 'chai';
import { goalEnd } from '../../evals/goal-caller';

describe('evals goal caller: what a goal_reached call says', () => {
  it('reached only when `reached` is true: missing, false, a string or a number is not reached', () => {
    expect(goalEnd('{"reached": true, "reason": "they open at 7"}')).to.deep.equal({ reached: true, reason: 'they open at 7' });
    expect(goalEnd('{"reached": false, "reason": "closed today"}')).to.deep.equal({ reached: false, reason: 'closed today' });
    for (const args of ['{"reason": "done"}', '{"reached": "true", "reason": "done"}', '{"reached": 1, "reason": "done"}']) {
      expect(goalEnd(args), args).to.deep.equal({ reached: false, reason: 'done' });
    }
    expect(goalEnd('')).to.deep.equal({ reached: false, reason: 'the caller LLM ended the call (no reason given)' });
  });

  it('arguments that are not JSON: not reached, the reason quoting their first 100 characters', () => {
    const garbage = `{reached: true, reason: ${'x'.repeat(200)}`;
    expect(goalEnd(garbage)).to.deep.equal({ reached: false, reason: `the caller LLM's goal_reached arguments were not JSON: ${garbage.slice(0, 100)}` });
    expect(goalEnd('true')).to.deep.equal({ reached: false, reason: "the caller LLM's goal_reached arguments were not a JSON object: true" });
    expect(goalEnd('null').reached).to.equal(false);
  });
});
