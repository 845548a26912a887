/**
 * The call page's quality section: for each leg (the call, the call that bridged it in, the calls it
 * bridged to), the summary written at hangup (`quality`: lowest and mean MOS, loss, jitter, RTT per
 * direction) and, over time, the leg's `call_quality` samples (one per 5 s, stored on its timeline,
 * GET /timelines/calls/{id}/events): MOS and loss/jitter for both directions. On a live call each
 * new sample of the call (call_quality on /v1.0/ws) reads them again.
 */
import { useMemo } from 'preact/hooks';
import { api, type Call, type Page, type QualitySample, type QualitySummary, type TimelineEvent } from '../api';
import { href } from '../router';
import { ErrorLine, Section, useLoad } from './common';
import { Chart, type ChartSeries } from './chart';

const EMPTY = '00000000-0000-0000-0000-000000000000';
/** A timeline page holds up to 1000 events: 80 minutes of samples with room for the call's other events. */
const PAGE = 1000;

interface Leg {
  call: Call;
  samples: { t: number; in: QualitySample | null; out: QualitySample | null }[];
}

async function legOf(call: Call): Promise<Leg> {
  const page = await api.get<Page<TimelineEvent>>(`/timelines/calls/${call.id}/events`, { page_size: PAGE });
  const samples = page.result
    .filter((e) => e.event_type === 'call_quality' && e.data?.call_id === call.id && e.timestamp)
    .map((e) => ({ t: Date.parse(e.timestamp!) / 1000, in: (e.data?.in as QualitySample | null) ?? null, out: (e.data?.out as QualitySample | null) ?? null }))
    .sort((a, b) => a.t - b.t);
  return { call, samples };
}

/** `samples`: how many live call_quality events of the call arrived (each reads the samples again). */
export function CallQualitySection({ call, samples = 0 }: { call: Call; samples?: number }) {
  const others = [call.master_call_id, ...(call.chained_call_ids ?? [])].filter((x): x is string => !!x && x !== EMPTY && x !== call.id);
  const legs = useLoad(async () => {
    const calls = [call, ...(await Promise.all(others.map((id) => api.get<Call>(`/calls/${id}`).catch(() => null)))).filter((c): c is Call => c !== null)];
    return Promise.all(calls.map(legOf));
  }, [call.id, call.status, others.join(','), samples]);
  return (
    <Section title="Call quality">
      <ErrorLine error={legs.error} />
      {!legs.data && legs.loading && <p>Loading…</p>}
      {(legs.data ?? []).map((leg, i) => (
        <LegQuality leg={leg} own={i === 0} />
      ))}
    </Section>
  );
}

const fixed = (n: number) => (v: number) => v.toFixed(n);
const dirs = ['in', 'out'] as const;
const DIR_NAME = { in: 'we receive', out: 'the party receives' };

function LegQuality({ leg, own }: { leg: Leg; own: boolean }) {
  const c = leg.call;
  const q = c.quality ?? null;
  const charts = useMemo(() => {
    const x = leg.samples.map((s) => s.t);
    const pick = (d: 'in' | 'out', f: (s: QualitySample) => number | null) => leg.samples.map((s) => (s[d] ? f(s[d]!) : null));
    const mos: ChartSeries[] = [
      { label: 'MOS in', color: '#2563eb', values: pick('in', (s) => s.mos) },
      { label: 'MOS out', color: '#ea580c', values: pick('out', (s) => s.mos) },
    ];
    const net: ChartSeries[] = [
      { label: 'Loss % in', color: '#dc2626', values: pick('in', (s) => s.loss_pct) },
      { label: 'Jitter ms in', color: '#7c3aed', values: pick('in', (s) => s.jitter_ms) },
      { label: 'Loss % out', color: '#f97316', values: pick('out', (s) => s.loss_pct) },
      { label: 'Jitter ms out', color: '#0891b2', values: pick('out', (s) => s.jitter_ms) },
    ];
    return { x, mos, net };
  }, [leg]);
  const name = `${c.direction} leg ${c.source?.target ?? ''} → ${c.destination?.target ?? ''}`;
  return (
    <div class="leg-quality" data-leg={c.id}>
      <h3>{own ? `This call (${name})` : <a href={href('calls', c.id)}>{name}</a>}</h3>
      {q ? (
        <table class="grid" aria-label={`Quality summary of the ${name}`}>
          <thead>
            <tr>
              <th scope="col">Direction ({q.codec || 'codec ?'})</th>
              <th scope="col">MOS lowest</th>
              <th scope="col">MOS mean</th>
              <th scope="col">Loss %</th>
              <th scope="col">Jitter ms</th>
              <th scope="col">RTT ms</th>
            </tr>
          </thead>
          <tbody>
            {dirs.map((d) => (
              <SummaryRow dir={d} s={q[d]} />
            ))}
          </tbody>
        </table>
      ) : (
        <p class="empty">{c.status === 'hangup' ? 'No quality summary: the call carried no media.' : 'The summary is written when the call ends.'}</p>
      )}
      {leg.samples.length > 0 ? (
        <div class="chart-grid">
          <Chart label={`MOS over time, ${name}`} time x={charts.x} series={charts.mos} unit={fixed(2)} caption="MOS (5 s samples)" yRange={[1, 4.5]} height={180} />
          <Chart label={`Loss and jitter over time, ${name}`} time x={charts.x} series={charts.net} unit={fixed(1)} caption="Loss % and jitter ms" height={180} />
        </div>
      ) : (
        <p class="empty">No quality samples on this leg's timeline.</p>
      )}
    </div>
  );
}

function SummaryRow({ dir, s }: { dir: 'in' | 'out'; s: QualitySummary | null }) {
  return (
    <tr data-dir={dir}>
      <th scope="row">
        {dir} ({DIR_NAME[dir]})
      </th>
      {s ? (
        <>
          <td class="num" data-field="mos_min">
            {s.mos_min.toFixed(2)}
          </td>
          <td class="num">{s.mos_avg.toFixed(2)}</td>
          <td class="num">{s.loss_pct.toFixed(1)}</td>
          <td class="num">{s.jitter_ms === null ? '—' : s.jitter_ms.toFixed(1)}</td>
          <td class="num">{s.rtt_ms === null ? '—' : Math.round(s.rtt_ms)}</td>
        </>
      ) : (
        <td colSpan={5}>not measured</td>
      )}
    </tr>
  );
}
