/** How the evals pages write a run's numbers: shares, milliseconds, latency stages, their percentiles, a call's turns. */
import type { EvalStage, EvalTurnResult } from '../api';
import { Table } from './common';

export const pct = (r: number | null) => (r === null ? '—' : `${Math.round(r * 100)} %`);
export const ms = (v: number | null | undefined) => (typeof v === 'number' ? `${Math.round(v)} ms` : '—');
/** The stages ai_talk records, in the order a turn goes through them (then any other `…_ms` field). */
export const STAGES = ['latency_ms', 'end_of_turn_wait_ms', 'stt_final_ms', 'llm_first_token_ms', 'tts_first_byte_ms'];
export const stageName = (k: string) => (k === 'latency_ms' ? 'latency' : k.replace(/_ms$/, '').replace(/_/g, ' '));
export const stageOrder = (k: string) => (STAGES.includes(k) ? STAGES.indexOf(k) : STAGES.length);
export const percentiles = (s: EvalStage | undefined) => (s ? `${Math.round(s.p50)} / ${Math.round(s.p95)} / ${Math.round(s.p99)} ms` : '—');

/** A call's agent turns: each one's latency stages (ms) and whether the caller interrupted it. */
export function TurnsTable({ turns }: { turns: EvalTurnResult[] }) {
  return (
    <Table
      label="Turns"
      rows={turns.map((t, i) => ({ ...t, i }))}
      rowKey={(t) => String(t.i)}
      empty="No agent turns."
      columns={[
        { title: 'Turn', cls: 'num', cell: (t) => t.i + 1 },
        ...STAGES.map((k) => ({ title: stageName(k), cls: 'num', cell: (t: EvalTurnResult) => ms(t[k] as number | null) })),
        { title: 'Interrupted', cell: (t) => (t.interrupted ? 'yes' : '') },
      ]}
    />
  );
}
