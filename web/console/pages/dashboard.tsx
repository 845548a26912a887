/**
 * The dashboard (`#/dashboard?range=24h`): GET /v1.0/dashboard drawn as charts: calls and answered
 * calls per bucket, peak concurrent calls, answer-seizure ratio, average call duration, webhook
 * deliveries and failures, voice-agent reply time and time-to-first-audio percentiles (with the
 * per-stage split of the range), the MOS distribution and the worst calls. Ranges 1 h to 30 days.
 */
import { useMemo } from 'preact/hooks';
import { api, type AiLatency, type AiLatencyStage, type Dashboard, type DashboardRange } from '../api';
import { go, href, type Route } from '../router';
import { ErrorLine, Section, Table, shortTime, useLoad } from '../components/common';
import { Chart, type ChartSeries } from '../components/chart';

/** Every range the server offers, by name (a range added there fails the type check here until it has a label). */
const RANGES: Record<DashboardRange, string> = {
  '1h': 'Last hour',
  '6h': '6 hours',
  '24h': '24 hours',
  '7d': '7 days',
  '30d': '30 days',
};
const isRange = (r: string | null): r is DashboardRange => r !== null && Object.hasOwn(RANGES, r);

const COLORS = {
  calls: '#2563eb',
  answered: '#16a34a',
  concurrent: '#7c3aed',
  asr: '#0891b2',
  acd: '#ea580c',
  hooks: '#94a3b8',
  failed: '#dc2626',
  mos: '#0d9488',
  p50: '#16a34a',
  p90: '#ea580c',
  p99: '#dc2626',
};

const pct = (v: number) => `${Math.round(v * 100)}%`;
const secs = (v: number) => (v >= 90 ? `${Math.round(v / 6) / 10} min` : `${Math.round(v)} s`);
const int = (v: number) => String(Math.round(v * 10) / 10);
const ms = (v: number) => (v >= 1000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);

function bucketName(sec: number): string {
  if (sec < 3600) return `${sec / 60} min`;
  return `${sec / 3600} h`;
}

export function DashboardPage({ route }: { route: Route }) {
  const asked = route.query.get('range');
  const range: DashboardRange = isRange(asked) ? asked : '24h';
  const dash = useLoad(() => api.get<Dashboard>('/dashboard', { range }), [range]);
  const d = dash.data;

  const charts = useMemo(() => (d ? chartSeries(d) : null), [d]);

  const per = d ? bucketName(d.bucket_sec) : '';
  return (
    <>
      <Section
        title="Dashboard"
        actions={
          <div class="segmented" role="group" aria-label="Range">
            {Object.entries(RANGES).map(([r, label]) => (
              <button aria-pressed={r === range} onClick={() => go(`/dashboard?range=${r}`)}>
                {label}
              </button>
            ))}
            <button class="link" onClick={() => dash.reload()}>
              Refresh
            </button>
          </div>
        }
      >
        <ErrorLine error={dash.error} />
        {!d && dash.loading && <p>Loading…</p>}
        {d && (
          <>
            <p class="muted">
              {shortTime(d.start)} to {shortTime(d.end)} UTC, in buckets of {per}.
            </p>
            <Totals d={d} />
          </>
        )}
      </Section>
      {d && charts && <Charts d={d} charts={charts} per={per} />}
      {d && <WorstCalls d={d} />}
    </>
  );
}

/** The series of every chart, from the dashboard's buckets and MOS histogram. */
function chartSeries(d: Dashboard) {
  const x = d.buckets.map((b) => Date.parse(b.t) / 1000);
  const col = (f: (b: Dashboard['buckets'][number]) => number | null): (number | null)[] => d.buckets.map(f);
  const s = (label: string, color: keyof typeof COLORS, values: (number | null)[], more: Partial<ChartSeries> = {}): ChartSeries => ({ label, color: COLORS[color], values, ...more });
  return {
    x,
    calls: [
      s(
        'Calls',
        'calls',
        col((b) => b.calls),
        { bars: true },
      ),
      s(
        'Answered',
        'answered',
        col((b) => b.answered),
      ),
    ],
    concurrent: [
      s(
        'Peak concurrent',
        'concurrent',
        col((b) => b.concurrent_peak),
        { stepped: true },
      ),
    ],
    asr: [
      s(
        'ASR',
        'asr',
        col((b) => (b.calls ? b.answered / b.calls : null)),
      ),
    ],
    acd: [
      s(
        'ACD',
        'acd',
        col((b) => b.acd_sec),
      ),
    ],
    ai: [
      s(
        'p50',
        'p50',
        col((b) => b.ai_reply_ms?.p50 ?? null),
      ),
      s(
        'p90',
        'p90',
        col((b) => b.ai_reply_ms?.p90 ?? null),
      ),
      s(
        'p99',
        'p99',
        col((b) => b.ai_reply_ms?.p99 ?? null),
      ),
    ],
    firstAudio: [
      s(
        'p50',
        'p50',
        col((b) => b.ai_latency_ms?.first_rtp?.p50 ?? null),
      ),
      s(
        'p90',
        'p90',
        col((b) => b.ai_latency_ms?.first_rtp?.p90 ?? null),
      ),
      s(
        'p99',
        'p99',
        col((b) => b.ai_latency_ms?.first_rtp?.p99 ?? null),
      ),
    ],
    hooks: [
      s(
        'Deliveries',
        'hooks',
        col((b) => b.webhook_deliveries),
        { bars: true },
      ),
      s(
        'Failed',
        'failed',
        col((b) => b.webhook_failures),
        { bars: true },
      ),
    ],
    mosX: d.mos_histogram.counts.map((_, i) => i),
    mosCats: d.mos_histogram.counts.map((_, i) => `${d.mos_histogram.edges[i]!.toFixed(1)}–${d.mos_histogram.edges[i + 1]!.toFixed(1)}`),
    mos: [s('Calls', 'mos', d.mos_histogram.counts, { bars: true })],
  };
}

type ChartsData = ReturnType<typeof chartSeries>;

/** The range's totals as tiles. */
function Totals({ d }: { d: Dashboard }) {
  return (
    <dl class="tiles" aria-label="Totals">
      <Tile name="Calls" value={String(d.totals.calls)} field="calls" />
      <Tile name="Answer-seizure ratio" value={d.totals.asr === null ? '—' : pct(d.totals.asr)} field="asr" />
      <Tile name="Average call duration" value={d.totals.acd_sec === null ? '—' : secs(d.totals.acd_sec)} field="acd" />
      <Tile name="Peak concurrent calls" value={String(d.totals.concurrent_peak)} field="concurrent" />
      <Tile name="Mean of calls' lowest MOS" value={d.totals.mos_avg === null ? '—' : d.totals.mos_avg.toFixed(2)} field="mos" />
      <Tile name="Webhook failures" value={`${d.totals.webhook_failures} of ${d.totals.webhook_deliveries}`} field="webhook-failures" />
      <Tile name="AI reply time p90" value={d.totals.ai_reply_ms ? ms(d.totals.ai_reply_ms.p90) : '—'} field="ai-p90" />
      <Tile name="AI first audio p90" value={d.totals.ai_latency_ms?.first_rtp ? ms(d.totals.ai_latency_ms.first_rtp.p90) : '—'} field="ai-first-audio-p90" />
    </dl>
  );
}

function Charts({ d, charts, per }: { d: Dashboard; charts: ChartsData; per: string }) {
  return (
    <div class="chart-grid">
      <Section title={`Calls per ${per}`}>
        <Chart label={`Calls and answered calls per ${per}`} time x={charts.x} series={charts.calls} unit={int} integer />
      </Section>
      <Section title="Concurrent calls">
        <Chart label={`Peak concurrent calls per ${per}`} time x={charts.x} series={charts.concurrent} unit={int} integer />
      </Section>
      <Section title="Answer-seizure ratio">
        <Chart label={`Answered share of calls per ${per}`} time x={charts.x} series={charts.asr} unit={pct} yRange={[0, 1]} />
      </Section>
      <Section title="Average call duration">
        <Chart label={`Average answered call duration per ${per}`} time x={charts.x} series={charts.acd} unit={secs} />
      </Section>
      <Section title="Webhook deliveries">
        <Chart label={`Webhook deliveries and failures per ${per}`} time x={charts.x} series={charts.hooks} unit={int} integer />
      </Section>
      <Section title="AI reply time">
        <Chart label={`Voice-agent reply time percentiles per ${per}`} time x={charts.x} series={charts.ai} unit={ms} />
        <p class="hint">
          {d.totals.ai_reply_ms
            ? `${d.totals.ai_reply_ms.turns} turns: p50 ${ms(d.totals.ai_reply_ms.p50)}, p90 ${ms(d.totals.ai_reply_ms.p90)}, p99 ${ms(d.totals.ai_reply_ms.p99)}. `
            : 'No voice-agent turn in this range. '}
          From the caller's words to the agent's complete answer (the first audio comes sooner: sentences are spoken as they arrive).
        </p>
      </Section>
      <Section title="AI time to first audio">
        <Chart label={`Voice-agent time from the caller's last word to the first reply audio, percentiles per ${per}`} time x={charts.x} series={charts.firstAudio} unit={ms} />
        <StageTable latency={d.totals.ai_latency_ms} />
      </Section>
      <Section title="Call quality (MOS)">
        <Chart label="Calls by their lowest MOS" x={charts.mosX} categories={charts.mosCats} series={charts.mos} unit={int} integer />
      </Section>
    </div>
  );
}

function WorstCalls({ d }: { d: Dashboard }) {
  return (
    <Section title="Worst calls by MOS">
      <Table
        label="Calls with the lowest MOS"
        rows={d.worst_calls}
        rowKey={(w) => w.id}
        empty="No call with a quality measurement in this range."
        columns={[
          { title: 'MOS', cell: (w) => w.mos_min.toFixed(2), cls: 'num' },
          { title: 'Call', cell: (w) => <a href={href('calls', w.id)}>{`${w.source_target || '?'} → ${w.destination_target || '?'}`}</a> },
          { title: 'Direction', cell: (w) => w.direction },
          { title: 'Codec', cell: (w) => w.codec },
          { title: 'Started', cell: (w) => shortTime(w.tm_create) },
        ]}
      />
    </Section>
  );
}

/** Every stage of the server's AiLatency, by name (a stage added there fails the type check here until it has a label). */
const STAGES: Record<AiLatencyStage, string> = {
  first_rtp: "Caller's last word → first audio out",
  end_of_turn_wait: 'End-of-turn wait',
  stt_final: "Recogniser's final words",
  llm_first_token: 'LLM first token',
  tts_first_byte: 'Voice first audio',
};

/** The range's latency per stage (each turn's answer metadata.latency). */
function StageTable({ latency }: { latency: AiLatency | null }) {
  if (!latency) return <p class="hint">No voice-agent turn with its latency recorded in this range.</p>;
  const rows = (Object.entries(STAGES) as [AiLatencyStage, string][]).map(([key, name]) => ({ key, name, p: latency[key] }));
  return (
    <Table
      label="AI turn latency by stage"
      rows={rows}
      rowKey={(r) => r.key}
      columns={[
        { title: `Stage (${latency.turns} turns)`, cell: (r) => r.name },
        { title: 'p50', cell: (r) => (r.p ? ms(r.p.p50) : '—'), cls: 'num' },
        { title: 'p90', cell: (r) => (r.p ? ms(r.p.p90) : '—'), cls: 'num' },
        { title: 'p99', cell: (r) => (r.p ? ms(r.p.p99) : '—'), cls: 'num' },
      ]}
    />
  );
}

function Tile(props: { name: string; value: string; field: string }) {
  return (
    <div class="tile">
      <dt>{props.name}</dt>
      <dd data-field={props.field}>{props.value}</dd>
    </div>
  );
}
