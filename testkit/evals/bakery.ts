// The agent-kinds scenario (docs/evals.md "Agent kinds"): a bakery's agent greets at length, answers
// the opening hours and the digit 1; the caller talks over the greeting, waits for the answer, presses
// 1 and hangs up, hearing the agent through pocketsphinx with the agent's three lines as its phrases.
// test/evals/agent-kinds.test.ts and agent-framework.test.ts run it, each with its own checks.

export const GREETING = 'Welcome to the corner bakery, where we bake bread, rolls, cakes and pastries every single morning before sunrise.';
export const ANSWER = 'We are open from nine to five.';
export const DIGIT = 'You pressed one.';
export const ASK = 'What are your opening hours?';
/** The caller's phrases: what the agent says, as pocketsphinx's grammar takes them. */
export const PHRASES = [GREETING, ANSWER, DIGIT].map((s) => s.toLowerCase().replace(/[^a-z ]/g, ''));

/** The scenario's body (POST /v1.0/eval_scenarios) against `number`, with `checks`. */
export function bakeryScenario(name: string, number: string, checks: Record<string, unknown>[]) {
  return {
    name,
    target: { type: 'number', target: number },
    caller: {
      turns: [{ say: ASK, after_agent_ms: 1500 }, { wait_ms: 5000 }, { dtmf: '1' }, { wait_ms: 4500 }, { hangup: true }],
      hear: { provider: 'pocketsphinx', phrases: PHRASES },
    },
    checks,
  };
}
