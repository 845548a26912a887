/**
 * An AI's version history (issue 56, docs/evals.md "Agent versions"): the versions newest first (GET
 * /ais/{id}/versions: number, when, who, the fields changed), one version's configuration (GET
 * /ais/{id}/versions/{number}), and for managers (POST /eval_runs is the manager's) a run of chosen
 * scenarios over two chosen versions side by side, shown on the run's page once started.
 */
import { useState } from 'preact/hooks';
import { api, canManage, type Ai, type AiVersion, type EvalScenario } from '../api';
import { ErrorLine, Section, Table, shortTime, useLoad } from '../components/common';
import { RunForm } from '../components/eval-run-form';
import { useMakers, VersionConfig, type Makers } from '../components/ai-version-view';
import { useConsole } from '../context';
import { href } from '../router';

export function AiVersionsPage({ id, number }: { id: string; number?: number }) {
  const { me } = useConsole();
  const ai = useLoad(() => api.get<Ai>(`/ais/${id}`), [id]);
  const versions = useLoad(() => api.all<AiVersion>(`/ais/${id}/versions`), [id]);
  const makers = useMakers(me);
  const list = versions.data ?? [];
  const shown = number ?? list[0]?.number;
  const name = ai.data ? ai.data.name || ai.data.id.slice(0, 8) : id.slice(0, 8);
  return (
    <>
      <Section title={`Versions of ${name}`} actions={<a href={href('ais')}>All AI agents</a>}>
        <ErrorLine error={ai.error || versions.error} />
        <ErrorLine error={makers.error && `Who made them: ${makers.error}`} />
        <Table
          label="Versions"
          rows={list}
          rowKey={(v) => String(v.number)}
          rowClass={(v) => (v.number === shown ? 'selected' : '')}
          empty={versions.loading ? 'Loading…' : 'No versions.'}
          columns={[
            {
              title: 'Version',
              cell: (v) => (
                <a href={href('ais', id, 'versions', String(v.number))} data-field="number" aria-current={v.number === shown ? 'true' : undefined}>
                  v{v.number}
                </a>
              ),
            },
            { title: 'When', cell: (v) => <span data-field="when">{shortTime(v.tm_create)}</span> },
            { title: 'Who', cell: (v) => <span data-field="who">{makers.name(v.created_by)}</span> },
            { title: 'What changed', cell: (v) => <span data-field="changed">{v.number === 1 ? 'created' : v.changed.join(', ')}</span> },
          ]}
        />
      </Section>
      {shown !== undefined && <VersionSection key={`${id}/${shown}`} aiId={id} number={shown} makers={makers} />}
      {canManage(me) && list.length >= 2 && <SideBySide aiId={id} versions={list} />}
    </>
  );
}

function VersionSection({ aiId, number, makers }: { aiId: string; number: number; makers: Makers }) {
  const version = useLoad(() => api.get<AiVersion>(`/ais/${aiId}/versions/${number}`), [aiId, number]);
  const v = version.data;
  return (
    <Section title={`Version ${number}`}>
      <ErrorLine error={version.error} />
      {version.loading && !v && <p>Loading…</p>}
      {v && (
        <>
          <p class="muted" data-field="version-made">
            {shortTime(v.tm_create)} by {makers.name(v.created_by)} · {v.number === 1 ? 'created' : `changed ${v.changed.join(', ')}`}
          </p>
          <VersionConfig version={v} />
        </>
      )}
    </Section>
  );
}

/** Two versions and the scenarios to run on both: the second is compared with the first (the run's `compare`). */
function SideBySide({ aiId, versions }: { aiId: string; versions: AiVersion[] }) {
  const scenarios = useLoad(() => api.all<EvalScenario>('/eval_scenarios'));
  // newest first: the one before the newest, then the newest
  const [from, setFrom] = useState(versions[1]!.number);
  const [to, setTo] = useState(versions[0]!.number);
  const [chosen, setChosen] = useState<string[]>([]);
  const toggle = (sid: string, on: boolean) => setChosen((c) => (on ? [...c, sid] : c.filter((x) => x !== sid)));
  const body = () => {
    if (from === to) return 'Choose two different versions.';
    if (!chosen.length) return 'Choose at least one scenario.';
    return { scenario_ids: chosen, ai_id: aiId, versions: [from, to] };
  };
  const pick = (label: string, name: string, value: number, set: (n: number) => void) => (
    <label>
      {label}
      <select name={name} value={String(value)} onChange={(e) => set(Number(e.currentTarget.value))}>
        {versions.map((v) => (
          <option value={String(v.number)}>v{v.number}</option>
        ))}
      </select>
    </label>
  );
  return (
    <Section title="Run side by side">
      <p class="muted">Each scenario's calls are placed once on each version; the run's page shows which checks and latencies moved from the first to the second.</p>
      <ErrorLine error={scenarios.error && `The scenarios: ${scenarios.error}`} />
      <RunForm label="Run side by side" body={body}>
        <div class="row-form">
          {pick('From version', 'from', from, setFrom)}
          {pick('To version', 'to', to, setTo)}
        </div>
        <fieldset class="scenario-pick">
          <legend>Scenarios</legend>
          {scenarios.loading && <p>Loading…</p>}
          {!scenarios.loading && !scenarios.data?.length && (
            <p class="empty">
              No scenarios yet: <a href={href('evals', 'scenarios')}>write one</a>.
            </p>
          )}
          {scenarios.data?.map((s) => (
            <label class="inline">
              <input type="checkbox" name="scenario" value={s.id} checked={chosen.includes(s.id)} onChange={(e) => toggle(s.id, e.currentTarget.checked)} />
              {s.name}
            </label>
          ))}
        </fieldset>
      </RunForm>
    </Section>
  );
}
