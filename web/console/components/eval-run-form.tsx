/**
 * Starting an eval run (POST /eval_runs, docs/evals.md): calls per scenario and calls at once, plus what
 * the page adds (the scenarios, an AI's versions); the API checks the body and its refusal is shown as
 * it came. Started, the console goes to the run's page, which follows it live.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, type EvalRun } from '../api';
import { go } from '../router';
import { ErrorLine, useAction } from './common';

export function RunForm(props: {
  label: string;
  /** the body's other fields (scenario_ids, ai_id, versions), or why the run cannot start yet */
  body: () => Record<string, unknown> | string;
  children?: ComponentChildren;
}) {
  const [calls, setCalls] = useState('1');
  const [concurrency, setConcurrency] = useState('1');
  // after a first try, what is missing is said and follows the choices as they change
  const [tried, setTried] = useState(false);
  const act = useAction();
  const now = props.body();
  const missing = tried && typeof now === 'string' ? now : '';
  const submit = (ev: Event) => {
    ev.preventDefault();
    setTried(true);
    const rest = props.body();
    if (typeof rest === 'string') return;
    void act.run(async () => {
      const run = await api.post<EvalRun>('/eval_runs', { ...rest, calls: Number(calls), concurrency: Number(concurrency) });
      go(`/evals/${run.id}`);
    });
  };
  return (
    <form class="eval-run-form" onSubmit={submit} aria-label={props.label}>
      {props.children}
      <div class="row-form">
        <label>
          Calls per scenario
          <input name="calls" type="number" min="1" max="50" required value={calls} onInput={(e) => setCalls(e.currentTarget.value)} />
        </label>
        <label>
          At once
          <input name="concurrency" type="number" min="1" max="50" required value={concurrency} onInput={(e) => setConcurrency(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary" data-action="start-run" disabled={act.busy}>
          {props.label}
        </button>
      </div>
      <ErrorLine error={missing || act.error} />
    </form>
  );
}
