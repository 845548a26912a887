/**
 * One eval scenario (GET /eval_scenarios/{id}): its target, its caller (language, persona or goal, the
 * turns in order) and its checks in words; for managers (the writing routes are the manager's) its JSON
 * edited and saved (PUT: the API's refusal shown as it came), delete after a confirmation, and a run of
 * it started (POST /eval_runs) that the console then shows.
 */
import { api, canManage, type EvalScenario } from '../api';
import { ErrorLine, Section, shortTime, useAction, useLoad } from '../components/common';
import { JsonEditor } from '../components/json-editor';
import { RunForm } from '../components/eval-run-form';
import { CallerView, ChecksView, TargetView } from '../components/eval-scenario-words';
import { useConsole } from '../context';
import { go, href } from '../router';

const editable = (s: EvalScenario) => ({ name: s.name, target: s.target, caller: s.caller, checks: s.checks });

export function EvalScenarioPage({ id }: { id: string }) {
  const { me } = useConsole();
  const scenario = useLoad(() => api.get<EvalScenario>(`/eval_scenarios/${id}`), [id]);
  const del = useAction();
  const s = scenario.data;
  if (!s)
    return (
      <Section title="Eval scenario" actions={<a href={href('evals', 'scenarios')}>All scenarios</a>}>
        <ErrorLine error={scenario.error} />
        {scenario.loading && <p>Loading…</p>}
      </Section>
    );
  const remove = () => {
    if (!confirm(`Delete the scenario “${s.name}”? Runs made of it keep it as it was.`)) return;
    void del.run(async () => {
      await api.del(`/eval_scenarios/${s.id}`);
      go('/evals/scenarios');
    });
  };
  const manager = canManage(me);
  return (
    <>
      <Section
        title="Eval scenario"
        actions={
          <span class="head-actions">
            <a href={href('evals', 'scenarios')}>All scenarios</a>
            {manager && (
              <button class="danger" data-action="delete-scenario" onClick={remove} disabled={del.busy}>
                Delete
              </button>
            )}
          </span>
        }
      >
        <ErrorLine error={del.error} />
        <dl class="facts">
          <dt>Name</dt>
          <dd data-field="name">{s.name}</dd>
          <dt>Target</dt>
          <dd>
            <TargetView target={s.target} />
          </dd>
          <dt>Updated</dt>
          <dd>{shortTime(s.tm_update) || shortTime(s.tm_create)}</dd>
        </dl>
        <h3>Caller</h3>
        <CallerView caller={s.caller} />
        <h3>Checks</h3>
        <ChecksView checks={s.checks} />
      </Section>
      {manager && (
        <Section title="Run it">
          <RunForm label="Run" body={() => ({ scenario_ids: [s.id] })} />
        </Section>
      )}
      {manager && (
        <Section title="Edit as JSON">
          <JsonEditor
            id="scenario-edit"
            label="Scenario (name, target, caller, checks)"
            initial={JSON.stringify(editable(s), null, 2)}
            submitLabel="Save"
            onSubmit={async (body) => {
              scenario.set(await api.put<EvalScenario>(`/eval_scenarios/${s.id}`, body));
              return 'Saved.';
            }}
          />
        </Section>
      )}
    </>
  );
}
