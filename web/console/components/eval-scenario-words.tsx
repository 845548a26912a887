/**
 * An eval scenario in words (core/evals/schema.ts): where its caller dials, who the caller is and what
 * it does turn by turn, and what is checked. Every text of the customer's is a text node.
 */
import type { EvalCaller, EvalCheck, EvalTarget, EvalTurn } from '../api';
import { href } from '../router';

/** The target: a number as is, a flow or an AI linked to its page. */
export function TargetView({ target }: { target: EvalTarget }) {
  switch (target.type) {
    case 'number':
      return <span data-field="target">number {target.target}</span>;
    case 'flow':
      return (
        <span data-field="target">
          flow <a href={href('flows', target.target)}>{target.target.slice(0, 8)}</a>
        </span>
      );
    case 'ai':
      return (
        <span data-field="target">
          AI <a href={href('ais', target.target, 'versions')}>{target.target.slice(0, 8)}</a>
        </span>
      );
  }
}

/** The target in a table cell: its type and what it names. */
export const targetText = (t: EvalTarget) => `${t.type} ${t.type === 'number' ? t.target : t.target.slice(0, 8)}`;

export function turnText(t: EvalTurn): string {
  if ('wait_ms' in t) return `wait ${t.wait_ms} ms`;
  if ('say' in t) return t.after_agent_ms === undefined ? `say “${t.say}”` : `say “${t.say}”, talking over the agent ${t.after_agent_ms} ms after it starts`;
  if ('dtmf' in t) return `press ${t.dtmf}`;
  return 'hang up';
}

const whose = (role: 'caller' | 'agent') => (role === 'agent' ? "the agent's" : "the caller's");

export function checkText(c: EvalCheck): string {
  switch (c.type) {
    case 'transcript_contains':
      return `${whose(c.role)} lines contain “${c.text}”`;
    case 'transcript_not_contains':
      return `${whose(c.role)} lines do not contain “${c.text}”`;
    case 'latency_under':
      return `every agent turn answers within ${c.ms} ms`;
    case 'barge_in_within':
      return `the agent stops within ${c.ms} ms when talked over`;
    case 'no_self_interruption':
      return 'the agent never interrupts itself';
    case 'tool_called':
      return `tool ${c.name} is called${c.arguments ? ` with ${JSON.stringify(c.arguments)}` : ''}`;
    case 'ended_by':
      return `the ${c.by} hangs up`;
    case 'transferred':
      return 'the call is transferred';
    case 'transcript_heard_contains':
      return `the caller hears “${c.text}”`;
    case 'judge':
      return `an LLM judge: ${c.rubric}`;
  }
}

/** The caller: language, persona, goal, its turns in order (or the goal's bounds), what it hears with, the background. */
export function CallerView({ caller }: { caller: EvalCaller }) {
  const bg = caller.background;
  return (
    <dl class="facts" aria-label="Caller">
      <dt>Language</dt>
      <dd data-field="language">{caller.language}</dd>
      {caller.persona !== undefined && (
        <>
          <dt>Persona</dt>
          <dd data-field="persona">{caller.persona}</dd>
        </>
      )}
      {caller.goal !== undefined && (
        <>
          <dt>Goal</dt>
          <dd data-field="goal">
            {caller.goal}
            {caller.max_turns !== undefined && ` (at most ${caller.max_turns} lines)`}
          </dd>
        </>
      )}
      {caller.turns && (
        <>
          <dt>Turns</dt>
          <dd>
            <ol class="eval-turns" aria-label="Turns">
              {caller.turns.map((t) => (
                <li data-turn={Object.keys(t)[0]}>{turnText(t)}</li>
              ))}
            </ol>
          </dd>
        </>
      )}
      {caller.hear && (
        <>
          <dt>Hears with</dt>
          <dd>{caller.hear.provider}</dd>
        </>
      )}
      {bg && (
        <>
          <dt>Background</dt>
          <dd>{bg.type === 'echo' ? `echo of the agent at ${bg.gain_db} dB after ${bg.delay_ms} ms` : `${bg.type} at ${bg.level_db} dBFS`}</dd>
        </>
      )}
    </dl>
  );
}

export function ChecksView({ checks }: { checks: EvalCheck[] }) {
  if (!checks.length) return <p class="empty">No checks: a call passes when it is placed.</p>;
  return (
    <ol class="eval-scenario-checks" aria-label="Checks">
      {checks.map((c) => (
        <li data-check={c.type}>
          <strong>{c.type}</strong> {checkText(c)}
        </li>
      ))}
    </ol>
  );
}
