// A run's summaries (core/evals/summary.ts, docs/evals.md "Per run"): nearest-rank percentiles of every
// latency stage over all turns, each check's pass count by scenario and place, and a comparison that
// names the checks whose pass rate moved and the stages whose p50 or p95 moved past both thresholds.
import { expect } from 'chai';
import { compareSummaries, latencyOf, percentile, summarize, LATENCY_MOVE_MS, LATENCY_P95_MIN_TURNS } from '../../core/evals/summary';
import { callsOf } from '../../evals/runner';
import { runTable } from '../../scripts/eval/run-file';
import type { EvalCallResult, EvalTurnResult } from '../../core/evals/schema';

const turn = (latency_ms: number | null, stt_final_ms: number | null = null): EvalTurnResult => ({
  latency_ms,
  end_of_turn_wait_ms: null,
  stt_final_ms,
  llm_first_token_ms: null,
  tts_first_byte_ms: null,
  interrupted: false,
  end_of_turn_rule: 'silence',
});

function call(turns: EvalTurnResult[], checks: boolean[], scenario = 's1', ai_version?: number): EvalCallResult {
  return {
    scenario_id: scenario,
    call_id: 'c',
    sip_call_id: 'x',
    ended_by: 'caller',
    transcript: [],
    turns,
    checks: checks.map((passed, i) => ({ type: i === 0 ? 'transcript_contains' : 'latency_under', passed, evidence: '' })),
    passed: checks.every(Boolean),
    ...(ai_version !== undefined ? { ai_version } : {}),
  };
}

describe('eval run summaries: percentiles, check tallies, what moved', () => {
  it('nearest-rank percentiles: each a measured value', () => {
    const list = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(list, 50), percentile(list, 95), percentile(list, 99), percentile(list, 100)]).to.deep.equal([50, 95, 99, 100]);
    expect([percentile([7], 50), percentile([7], 99)]).to.deep.equal([7, 7]);
    expect([percentile([1, 2], 50), percentile([1, 2], 95)]).to.deep.equal([1, 2]);
  });

  it('latency per stage over every turn of every call; stages with no measure are left out, strings ignored', () => {
    const l = latencyOf([call([turn(100, 10), turn(300, 30)], []), call([turn(200), turn(null)], [])]);
    expect(Object.keys(l)).to.deep.equal(['latency_ms', 'stt_final_ms']);
    expect(l.latency_ms).to.deep.equal({ n: 3, p50: 200, p95: 300, p99: 300 });
    expect(l.stt_final_ms).to.deep.equal({ n: 2, p50: 10, p95: 30, p99: 30 });
  });

  it('tallies each check by scenario and place, and the pass rate', () => {
    const s = summarize([call([], [true, false]), call([], [true, true]), call([], [false], 's2')]);
    expect(s).to.deep.include({ calls: 3, passed: 1 });
    expect(s.pass_rate).to.be.closeTo(1 / 3, 1e-9);
    expect(s.checks).to.deep.equal([
      { scenario_id: 's1', index: 0, type: 'transcript_contains', passed: 2, of: 2 },
      { scenario_id: 's1', index: 1, type: 'latency_under', passed: 1, of: 2 },
      { scenario_id: 's2', index: 0, type: 'transcript_contains', passed: 0, of: 1 },
    ]);
    expect(summarize([])).to.deep.equal({ calls: 0, passed: 0, pass_rate: null, checks: [], latency: {} });
  });

  it('compare names the checks whose pass rate moved and the stages past both thresholds', () => {
    const from = summarize([call([turn(1000, 100)], [true, true]), call([turn(1000, 100)], [true, true])]);
    const to = summarize([call([turn(1500, 120)], [false, true]), call([turn(1500, 120)], [true, true])]);
    const c = compareSummaries(from, to);
    expect(c.pass_rate).to.deep.equal({ from: 1, to: 0.5 });
    expect(c.checks).to.deep.equal([{ scenario_id: 's1', index: 0, type: 'transcript_contains', from: { passed: 2, of: 2 }, to: { passed: 1, of: 2 }, moved: 'worse' }]);
    // latency_ms moved by 500 ms (50 %); stt_final_ms by 20 ms (20 %), under LATENCY_MOVE_MS
    expect(LATENCY_MOVE_MS).to.be.above(20);
    expect(c.latency).to.deep.equal([{ stage: 'latency_ms', from: { p50: 1000, p95: 1000 }, to: { p50: 1500, p95: 1500 }, moved: 'slower' }]);
    const back = compareSummaries(to, from);
    expect(back.checks[0]!.moved).to.equal('better');
    expect(back.latency[0]!.moved).to.equal('faster');
    expect(compareSummaries(from, from)).to.deep.equal({ pass_rate: { from: 1, to: 1 }, checks: [], latency: [] });
  });

  it('a p95 moves only over LATENCY_P95_MIN_TURNS turns a side: of fewer it is their slowest one', () => {
    // two turns a side, the same p50; only the slower turn moved 600 → 700 ms (past 10 % and 50 ms)
    const few = (slow: number) => summarize([call([turn(400), turn(slow)], [true, true])]);
    expect(compareSummaries(few(600), few(700)).latency).to.deep.equal([]);
    // as many turns as the rule asks (its p95 the two slowest of 20): the same tail move is a move
    const many = (slow: number) => summarize([call([...Array.from({ length: LATENCY_P95_MIN_TURNS - 2 }, () => turn(400)), turn(slow), turn(slow)], [true, true])]);
    expect(compareSummaries(many(600), many(700)).latency.map((m) => [m.stage, m.moved, m.from.p95, m.to.p95])).to.deep.equal([['latency_ms', 'slower', 600, 700]]);
  });

  it("the CI command's table: each call's version, each version's pass rate, and what moved", () => {
    const results = [call([turn(900)], [true, true], 's1', 1), call([turn(950)], [false, true], 's1', 2)];
    const byVersion = [1, 2].map((version) => ({ version, ...summarize(results.filter((r) => r.ai_version === version)) }));
    const compare = { from_version: 1, to_version: 2, ...compareSummaries(byVersion[0]!, byVersion[1]!) };
    const lines = runTable({ id: 'r1', status: 'finished', error: '', pass_rate: 0.5, results, by_version: byVersion, compare, baseline: null }, new Map([['s1', 'hours']]));
    expect(lines[2]).to.match(/^hours\s+1 v1\s+caller\s+900 ms\s+2\/2\s+pass$/);
    expect(lines[3]).to.match(/^hours\s+2 v2\s+caller\s+950 ms\s+1\/2\s+FAIL$/);
    expect(lines.slice(5)).to.deep.equal([
      'version 1: 1 call(s), pass rate 100%',
      'version 2: 1 call(s), pass rate 0%',
      'moved from version 1 to 2:',
      '  ✗ hours check 1 transcript_contains: 1/1 → 0/1 (worse)',
    ]);
  });

  it('a run over versions places every scenario × calls once per version, the versions alternating', () => {
    const s = (id: string) => ({ id, name: id, target: { type: 'number' as const, target: '+1000' }, caller: { language: 'en-US', turns: [{ wait_ms: 1 }] }, checks: [] });
    const placed = callsOf({ scenarios: [s('a'), s('b')], calls: 2, versions: [3, 5] });
    expect(placed.map((p) => `${p.scenario.id}${p.version}`)).to.deep.equal(['a3', 'a5', 'a3', 'a5', 'b3', 'b5', 'b3', 'b5']);
    expect(callsOf({ scenarios: [s('a')], calls: 2, versions: [] }).map((p) => [p.scenario.id, p.version])).to.deep.equal([
      ['a', undefined],
      ['a', undefined],
    ]);
  });
});
