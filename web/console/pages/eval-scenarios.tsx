/**
 * Eval scenarios (issue 56, docs/evals.md "Scenarios"): the list (GET /eval_scenarios) and, for managers
 * (the routes that write are the manager's), a new one written as JSON and checked by the API (POST
 * /eval_scenarios: the same rules as every other client). One scenario's page is eval-scenario.tsx.
 */
import { api, canManage, type EvalScenario, type NumberRow, type Page } from '../api';
import { ErrorLine, Section, Table, shortTime, useLoad } from '../components/common';
import { JsonEditor } from '../components/json-editor';
import { targetText } from '../components/eval-scenario-words';
import { useConsole } from '../context';
import { go, href } from '../router';
import { EvalScenarioPage } from './eval-scenario';

/** #/evals/scenarios[/<id>]. */
export function EvalScenariosRoute({ id }: { id?: string }) {
  return id ? <EvalScenarioPage key={id} id={id} /> : <EvalScenariosPage />;
}

function EvalScenariosPage() {
  const { me } = useConsole();
  const scenarios = useLoad(() => api.all<EvalScenario>('/eval_scenarios'));
  return (
    <>
      <Section title="Eval scenarios" actions={<a href={href('evals')}>Eval runs</a>}>
        <ErrorLine error={scenarios.error} />
        <Table
          label="Eval scenarios"
          rows={scenarios.data ?? []}
          rowKey={(s) => s.id}
          empty={scenarios.loading ? 'Loading…' : 'No eval scenarios yet.'}
          columns={[
            {
              title: 'Name',
              cell: (s) => (
                <a href={href('evals', 'scenarios', s.id)} data-field="name">
                  {s.name}
                </a>
              ),
            },
            { title: 'Target', cell: (s) => <span data-field="target">{targetText(s.target)}</span> },
            { title: 'Turns', cls: 'num', cell: (s) => <span data-field="turns">{s.caller.turns ? s.caller.turns.length : 'goal'}</span> },
            { title: 'Checks', cls: 'num', cell: (s) => <span data-field="checks">{s.checks.length}</span> },
            { title: 'Updated', cell: (s) => shortTime(s.tm_update) || shortTime(s.tm_create) },
          ]}
        />
      </Section>
      {canManage(me) && <NewScenario />}
    </>
  );
}

/** A scenario to start from: the customer's first number as its target, a short script, two checks. */
function template(number: string): string {
  const body = {
    name: 'Opening hours',
    target: { type: 'number', target: number },
    caller: { language: 'en-US', turns: [{ wait_ms: 2500 }, { say: 'What are your opening hours?' }, { wait_ms: 4000 }, { hangup: true }] },
    checks: [
      { type: 'latency_under', ms: 4000 },
      { type: 'transcript_contains', role: 'agent', text: 'open' },
    ],
  };
  return JSON.stringify(body, null, 2);
}

function NewScenario() {
  // the target must be a number of the customer's: the template names the first (the API refuses others)
  const numbers = useLoad(() => api.get<Page<NumberRow>>('/numbers', { page_size: 1 }).then((p) => p.result));
  const first = numbers.data?.[0]?.number ?? '+15550100000';
  return (
    <Section title="New scenario">
      <p class="muted">
        A target (<code>number</code>, <code>flow</code> or <code>ai</code>), a caller (its language and either <code>turns</code>: <code>wait_ms</code>, <code>say</code>, <code>dtmf</code>,{' '}
        <code>hangup</code>, or a <code>goal</code> an LLM plays) and checks; docs/evals.md says each field.
      </p>
      <ErrorLine error={numbers.error && `The numbers: ${numbers.error}`} />
      {numbers.loading ? (
        <p>Loading…</p>
      ) : (
        <JsonEditor
          id="scenario-new"
          label="Scenario (name, target, caller, checks)"
          initial={template(first)}
          submitLabel="Create"
          onSubmit={async (body) => {
            const s = await api.post<EvalScenario>('/eval_scenarios', body);
            go(`/evals/scenarios/${s.id}`);
            return 'Created.';
          }}
        />
      )}
    </Section>
  );
}
