/**
 * Evals (issue 56, docs/evals.md "Console"): the runs table (GET /eval_runs), a run's page (each call's
 * checks, the failing ones highlighted with their evidence, and its turns' latency stages), a call's
 * timeline (components/eval-timeline.tsx) and the two versions side by side (components/eval-compare.tsx).
 * A running run's page follows its events (components/eval-live.ts): calls and counts as they end.
 * Every text of the customer's (transcripts, scenario names, evidence) is rendered as text by Preact.
 */
import { api, type EvalCallResult, type EvalRun, type EvalScenario, type EvalStage } from '../api';
import { useLiveRun, type LiveRun, type PendingCall } from '../components/eval-live';
import { href } from '../router';
import { ErrorLine, Section, Table, shortTime, useLoad } from '../components/common';
import { EvalTimeline } from '../components/eval-timeline';
import { EvalCompare, Moved } from '../components/eval-compare';
import { TurnsTable, ms, pct, percentiles, stageName, stageOrder } from '../components/eval-format';

/** The route under #/evals: the table, a run, a run's call (`call/<index>`) or its versions compared (`compare`). */
export function EvalsPage({ path }: { path: string[] }) {
  const [id, sub, index] = path;
  if (!id) return <EvalRunsPage />;
  if (sub === 'compare') return <EvalRunLoaded key={id} id={id} view="compare" />;
  if (sub === 'call') return <EvalRunLoaded key={id} id={id} view="call" index={Number(index)} />;
  return <EvalRunLoaded key={id} id={id} view="run" />;
}

function EvalRunsPage() {
  const runs = useLoad(() => api.get<{ result: EvalRun[] }>('/eval_runs', { page_size: 100 }).then((p) => p.result));
  return (
    <Section
      title="Eval runs"
      actions={
        <a href={href('evals', 'scenarios')} data-action="scenarios">
          Scenarios
        </a>
      }
    >
      <ErrorLine error={runs.error} />
      <Table
        label="Eval runs"
        rows={runs.data ?? []}
        rowKey={(r) => r.id}
        rowClass={(r) => `eval-${r.status}`}
        empty={runs.loading ? 'Loading…' : 'No eval runs yet (POST /v1.0/eval_runs, or `npx tsx scripts/eval.ts`).'}
        columns={[
          {
            title: 'Status',
            cell: (r) => (
              <span class={`badge ev-${r.status}`} data-field="status">
                {r.status}
              </span>
            ),
          },
          { title: 'Run', cell: (r) => <a href={href('evals', r.id)}>{r.id.slice(0, 8)}</a> },
          { title: 'Scenarios', cls: 'num', cell: (r) => <span data-field="scenarios">{r.scenario_ids.length}</span> },
          { title: 'Calls', cls: 'num', cell: (r) => `${r.results.length} / ${r.scenario_ids.length * r.calls * Math.max(1, r.versions.length)}` },
          { title: 'Pass rate', cls: 'num', cell: (r) => <span data-field="pass-rate">{pct(r.pass_rate)}</span> },
          { title: 'Latency p50 / p95 / p99', cls: 'num', cell: (r) => <span data-field="latency">{percentiles(r.latency.latency_ms)}</span> },
          { title: 'Versions', cell: (r) => (r.versions.length ? r.versions.map((v) => `v${v}`).join(' · ') : '—') },
          { title: 'Created', cell: (r) => shortTime(r.tm_create) },
        ]}
      />
    </Section>
  );
}

function EvalRunLoaded(props: { id: string; view: 'run' | 'call' | 'compare'; index?: number }) {
  // the run, kept current by its events while shown (components/eval-live.ts)
  const { live, error } = useLiveRun(props.id);
  // the scenarios' names (a scenario deleted since the run, or names that failed to load: its id, the failure said)
  const scenarios = useLoad(() => api.all<EvalScenario>('/eval_scenarios'));
  if (!live) return <Section title="Eval run">{error ? <ErrorLine error={error} /> : <p class="empty">Loading…</p>}</Section>;
  const r = live.run;
  const nameOf = (sid: string) => scenarios.data?.find((s) => s.id === sid)?.name || sid.slice(0, 8);
  const call = props.view === 'call' ? r.results[props.index ?? -1] : undefined;
  return (
    <>
      <ErrorLine error={scenarios.error && `The scenarios' names: ${scenarios.error}`} />
      {props.view === 'compare' && <EvalCompare run={r} nameOf={nameOf} />}
      {props.view === 'call' && (call ? <EvalTimeline run={r} call={call} index={props.index!} name={nameOf(call.scenario_id)} /> : <p class="empty">Not found.</p>)}
      <ErrorLine error={error && `Reading the run again: ${error}`} />
      {props.view === 'run' && <EvalRunView live={live} nameOf={nameOf} />}
    </>
  );
}

function EvalRunView({ live, nameOf }: { live: LiveRun; nameOf: (id: string) => string }) {
  const { run } = live;
  return (
    <>
      <Section title={`Eval run ${run.id.slice(0, 8)}`} actions={<a href={href('evals')}>All runs</a>}>
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <span class={`badge ev-${run.status}`} data-field="status">
              {run.status}
            </span>
          </dd>
          <dt>Pass rate</dt>
          <dd data-field="pass-rate">{pct(run.pass_rate)}</dd>
          <dt>Calls</dt>
          <dd data-field="calls">
            {live.done} / {live.planned}
          </dd>
          <dt>Created</dt>
          <dd>{shortTime(run.tm_create)}</dd>
          {run.error && (
            <>
              <dt>Error</dt>
              <dd class="error">{run.error}</dd>
            </>
          )}
          {run.compare && (
            <>
              <dt>Versions</dt>
              <dd>
                <a href={href('evals', run.id, 'compare')} data-action="compare">
                  v{run.compare.from_version} and v{run.compare.to_version} side by side
                </a>
              </dd>
            </>
          )}
        </dl>
        <StageTable latency={run.latency} label="Latency over all turns" />
      </Section>
      {run.baseline && (
        <Section title="Against the baseline run" actions={<a href={href('evals', run.baseline.run_id)}>The baseline</a>}>
          <Moved cmp={run.baseline} from="baseline" to="this run" nameOf={nameOf} />
        </Section>
      )}
      {run.results.map((c, i) => (
        <EvalCallCard run={run} call={c} index={i} name={nameOf(c.scenario_id)} />
      ))}
      {live.pending.map((c) => (
        <PendingCallCard call={c} name={nameOf(c.scenario_id)} />
      ))}
    </>
  );
}

/** One call of a run: its verdict, its checks (the failing ones highlighted, with their evidence) and its turns. */
function EvalCallCard(props: { run: EvalRun; call: EvalCallResult; index: number; name: string }) {
  const c = props.call;
  return (
    <section class={`card eval-call ${c.passed ? 'passed' : 'failed'}`} data-call={props.index} aria-label={`Call ${props.index + 1}`}>
      <header class="card-head">
        <h2>
          Call {props.index + 1}: {props.name}
          {c.ai_version !== undefined && ` · v${c.ai_version}`}
        </h2>
        <span class={`badge ${c.passed ? 'ev-passed' : 'ev-failed'}`} data-field="verdict">
          {c.passed ? 'passed' : 'failed'}
        </span>
        <a href={href('evals', props.run.id, 'call', String(props.index))} data-action="timeline">
          Timeline
        </a>
      </header>
      {c.error && <p class="error">{c.error}</p>}
      <p class="muted">
        ended by {c.ended_by}
        {c.call_id && (
          <>
            {' · '}
            <a href={href('calls', c.call_id)}>the platform's call</a>
          </>
        )}
      </p>
      <ul class="eval-checks" aria-label="Checks">
        {c.checks.map((k) => (
          <li class={k.passed ? 'check-passed' : 'check-failed'} data-check={k.type} data-passed={String(k.passed)}>
            <span class="check-mark" aria-label={k.passed ? 'passed' : 'failed'}>
              {k.passed ? '✓' : '✗'}
            </span>{' '}
            <strong>{k.type}</strong> <span class="evidence">{k.evidence}</span>
          </li>
        ))}
      </ul>
      <TurnsTable turns={c.turns} />
    </section>
  );
}

/** A call its event announced (in brief) that the page has not read in full yet: the run's end reads it. */
function PendingCallCard({ call: c, name }: { call: PendingCall; name: string }) {
  return (
    <section class={`card eval-call pending ${c.passed ? 'passed' : 'failed'}`} data-call={c.index} aria-label={`Call ${c.index + 1}`}>
      <header class="card-head">
        <h2>
          Call {c.index + 1}: {name}
          {c.ai_version !== undefined && ` · v${c.ai_version}`}
        </h2>
        <span class={`badge ${c.passed ? 'ev-passed' : 'ev-failed'}`} data-field="verdict">
          {c.passed ? 'passed' : 'failed'}
        </span>
      </header>
      {c.error && <p class="error">{c.error}</p>}
      <p class="muted" data-field="checks">
        {c.checks_passed} of {c.checks} checks passed · ended by {c.ended_by} · the checks' evidence and the turns when the run ends
      </p>
    </section>
  );
}

function StageTable({ latency, label }: { latency: Record<string, EvalStage>; label: string }) {
  const rows = Object.entries(latency).sort(([a], [b]) => stageOrder(a) - stageOrder(b));
  return (
    <Table
      label={label}
      rows={rows}
      rowKey={([k]) => k}
      empty="No turn measured."
      columns={[
        { title: 'Stage', cell: ([k]) => stageName(k) },
        { title: 'Turns', cls: 'num', cell: ([, s]) => s.n },
        { title: 'p50', cls: 'num', cell: ([, s]) => ms(s.p50) },
        { title: 'p95', cls: 'num', cell: ([, s]) => ms(s.p95) },
        { title: 'p99', cls: 'num', cell: ([, s]) => ms(s.p99) },
      ]}
    />
  );
}
