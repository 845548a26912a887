/**
 * Two AI versions of one run side by side (`compare` of GET /eval_runs/{id}): each version's pass rate,
 * the checks whose pass rate moved (better, worse) and the latency stages whose p50 or p95 moved; then
 * each version's every check and stage, so what did not move is there too. A run with a baseline shows
 * what moved from the baseline run the same way.
 */
import type { EvalComparison, EvalRun } from '../api';
import { href } from '../router';
import { Section, Table } from './common';
import { ms, pct, percentiles, stageName, stageOrder } from './eval-format';

export function EvalCompare({ run, nameOf }: { run: EvalRun; nameOf: (id: string) => string }) {
  const c = run.compare;
  const back = <a href={href('evals', run.id)}>The run</a>;
  if (!c)
    return (
      <Section title="Versions side by side" actions={back}>
        <p class="empty">This run did not run two versions.</p>
      </Section>
    );
  const [a, b] = [run.by_version.find((v) => v.version === c.from_version), run.by_version.find((v) => v.version === c.to_version)];
  const stages = [...new Set([...Object.keys(a?.latency ?? {}), ...Object.keys(b?.latency ?? {})])].sort((x, y) => stageOrder(x) - stageOrder(y));
  return (
    <>
      <Section title={`Version ${c.from_version} and version ${c.to_version}`} actions={back}>
        <Moved cmp={c} from={`v${c.from_version}`} to={`v${c.to_version}`} nameOf={nameOf} />
      </Section>
      <Section title="Every check and stage">
        <Table
          label="Checks by version"
          rows={(a?.checks ?? []).map((k) => ({ k, other: b?.checks.find((o) => o.scenario_id === k.scenario_id && o.index === k.index) }))}
          rowKey={({ k }) => `${k.scenario_id}:${k.index}`}
          columns={[
            { title: 'Scenario', cell: ({ k }) => nameOf(k.scenario_id) },
            { title: 'Check', cell: ({ k }) => `${k.index + 1}. ${k.type}` },
            { title: `v${c.from_version}`, cls: 'num', cell: ({ k }) => `${k.passed} / ${k.of}` },
            { title: `v${c.to_version}`, cls: 'num', cell: ({ other }) => (other ? `${other.passed} / ${other.of}` : '—') },
          ]}
        />
        <Table
          label="Latency by version"
          rows={stages}
          rowKey={(k) => k}
          columns={[
            { title: 'Stage', cell: (k) => stageName(k) },
            { title: `v${c.from_version} p50 / p95 / p99`, cls: 'num', cell: (k) => percentiles(a?.latency[k]) },
            { title: `v${c.to_version} p50 / p95 / p99`, cls: 'num', cell: (k) => percentiles(b?.latency[k]) },
          ]}
        />
      </Section>
    </>
  );
}

/** What moved between two summaries: the pass rate, the checks (better / worse), the latency stages (faster / slower). */
export function Moved(props: { cmp: EvalComparison; from: string; to: string; nameOf: (id: string) => string }) {
  const { cmp } = props;
  return (
    <div class="eval-moved">
      <p data-field="pass-rates">
        Pass rate: {props.from} {pct(cmp.pass_rate.from)} → {props.to} {pct(cmp.pass_rate.to)}
      </p>
      <h3>Checks that moved</h3>
      <Table
        label="Checks that moved"
        rows={cmp.checks}
        rowKey={(k) => `${k.scenario_id}:${k.index}`}
        rowClass={(k) => `moved-${k.moved}`}
        empty="No check moved."
        columns={[
          { title: 'Scenario', cell: (k) => props.nameOf(k.scenario_id) },
          { title: 'Check', cell: (k) => <span data-field="check">{`${k.index + 1}. ${k.type}`}</span> },
          { title: props.from, cls: 'num', cell: (k) => `${k.from.passed} / ${k.from.of}` },
          { title: props.to, cls: 'num', cell: (k) => `${k.to.passed} / ${k.to.of}` },
          {
            title: 'Moved',
            cell: (k) => (
              <span class={`badge mv-${k.moved}`} data-field="moved">
                {k.moved}
              </span>
            ),
          },
        ]}
      />
      <h3>Latencies that moved</h3>
      <Table
        label="Latencies that moved"
        rows={cmp.latency}
        rowKey={(l) => l.stage}
        rowClass={(l) => `moved-${l.moved}`}
        empty="No latency moved."
        columns={[
          { title: 'Stage', cell: (l) => <span data-field="stage">{stageName(l.stage)}</span> },
          { title: `${props.from} p50 / p95`, cls: 'num', cell: (l) => `${ms(l.from.p50)} / ${ms(l.from.p95)}` },
          { title: `${props.to} p50 / p95`, cls: 'num', cell: (l) => `${ms(l.to.p50)} / ${ms(l.to.p95)}` },
          {
            title: 'Moved',
            cell: (l) => (
              <span class={`badge mv-${l.moved}`} data-field="moved">
                {l.moved}
              </span>
            ),
          },
        ]}
      />
    </div>
  );
}
