// The evals concurrency benchmark's arithmetic (scripts/bench/evals/verdict.ts): each stage's p50 and p90
// read from whole-ms samples without their rounding, the ratios and the 10 % verdict.
import { expect } from 'chai';
import { compareStages, formatRows, positiveCount, ratio, verdict, wholeMsPercentile } from '../../scripts/bench/evals/verdict';
import { percentile } from '../../core/evals/summary';

/** `count` samples of each value: [[4, 26], [5, 24]] is 26 fours and 24 fives */
const of = (...groups: [number, number][]) => groups.flatMap(([v, count]) => Array<number>(count).fill(v));

describe('evals benchmark verdict', () => {
  it('a stage of a few whole ms: the same spread read as 4 → 5 ms by the nearest rank is within 2 %', () => {
    // the agent's tts_first_byte_ms on the stand-in: 4.5 ms or so, recorded as 4 or 5 (Date.now() steps)
    const low = of([4, 26], [5, 24]);
    const high = of([4, 24], [5, 26]);
    // the nearest rank (the run's summary) reads them as 4 and 5 ms: a 25 % "slowdown" that is the rounding
    expect([percentile(low, 50), percentile(high, 50)]).to.deep.equal([4, 5]);
    expect(wholeMsPercentile(low, 50)).to.be.closeTo(3.5 + 25 / 26, 1e-9);
    expect(wholeMsPercentile(high, 50)).to.be.closeTo(4.5 + 1 / 26, 1e-9);
    const [row] = compareStages({ tts_first_byte_ms: low }, { tts_first_byte_ms: high }, 0.1);
    expect(row!.p50Ratio).to.be.closeTo((4.5 + 1 / 26) / (3.5 + 25 / 26), 1e-9);
    expect(row!.pass).to.equal(true);
  });

  it('a real slowdown of a few ms still fails: 4 → 6 ms', () => {
    const [row] = compareStages({ s: of([4, 50]) }, { s: of([6, 50]) }, 0.1);
    expect(row!.p50Ratio).to.be.closeTo(6 / 4, 1e-9);
    expect(row!.pass).to.equal(false);
  });

  it('p50 and p90 are judged: a tail grown at the high load fails', () => {
    const low = of([600, 45], [620, 5]);
    expect(compareStages({ s: low }, { s: of([600, 45], [620, 5]) }, 0.1)[0]!.pass).to.equal(true);
    const row = compareStages({ s: low }, { s: of([600, 40], [700, 10]) }, 0.1)[0]!;
    expect(row.p50Ratio).to.be.closeTo(1, 1e-3);
    expect(row.p90Ratio).to.be.greaterThan(1.1);
    expect(row.pass).to.equal(false);
  });

  it('a stage within 10 % passes; exactly 10 % passes; just over fails', () => {
    const rows = compareStages({ a: of([100, 10]), b: of([100, 10]) }, { a: of([110, 50]), b: of([111, 50]) }, 0.1);
    expect(rows.map((r) => [r.stage, r.pass])).to.deep.equal([
      ['a', true],
      ['b', false],
    ]);
    expect(rows[0]!.p50Ratio).to.be.closeTo(1.1, 1e-9);
    expect(verdict(rows)).to.equal('FAIL');
    expect(verdict(rows.slice(0, 1))).to.equal('PASS');
  });

  it('faster at the high load passes; a stage measured at one load only fails; no stage at all fails', () => {
    const rows = compareStages({ a: of([100, 5]), only_low: of([10, 5]) }, { a: of([80, 50]) }, 0.1);
    expect(rows.find((r) => r.stage === 'a')!.pass).to.equal(true);
    expect(rows.find((r) => r.stage === 'only_low')!.pass).to.equal(false);
    expect(verdict(compareStages({}, {}, 0.1))).to.equal('FAIL');
  });

  it('under two steps of the record (2 ms) at the low load: passes while under 2 ms at the high load too, fails above', () => {
    expect(ratio(0, 5)).to.equal(null);
    // llm_first_token_ms on the stand-in: 0 or 1 ms
    const low = of([0, 40], [1, 10]);
    const near = compareStages({ s: low }, { s: of([0, 35], [1, 15]) }, 0.1)[0]!;
    expect(near.low.p90).to.be.closeTo(1, 1e-9);
    expect(near.high.p90).to.be.greaterThan(1.1); // a ratio of 1.17 on 0.17 ms: the clock's dither
    expect(near.pass).to.equal(true);
    expect(compareStages({ s: low }, { s: of([0, 10], [3, 40]) }, 0.1)[0]!.pass).to.equal(false);
    expect(compareStages({ z: of([0, 5]) }, { z: of([0, 50]) }, 0.1)[0]!.pass).to.equal(true);
  });

  it('just under 2 ms at the low load: within 10 % passes though it crosses 2 ms, over 10 % fails', () => {
    // fractional samples: one sample is its own p50 and p90
    const at = (low: number, high: number) => compareStages({ s: [low] }, { s: [high] }, 0.1)[0]!;
    const crossing = at(1.9, 2.05); // ×1.08
    expect([crossing.low.p90, crossing.high.p90]).to.deep.equal([1.9, 2.05]);
    expect(crossing.pass).to.equal(true);
    expect(at(1.82, 2.002).pass).to.equal(true); // exactly 10 %
    expect(at(1.82, 2.01).pass).to.equal(false); // ×1.104
    expect(at(1.9, 2.2).pass).to.equal(false); // ×1.16
    expect(at(1.0, 1.17).pass).to.equal(true); // ×1.17, under 2 ms at both: the dither
  });

  it('a count on the command line is a positive integer, else a clear error', () => {
    expect(positiveCount('rounds', '2')).to.equal(2);
    for (const bad of ['0', '-1', '1.5', 'two', '', 'NaN', '1e3']) {
      expect(() => positiveCount('rounds', bad), bad).to.throw(`--rounds must be a positive integer, got ${JSON.stringify(bad)}`);
    }
  });

  it('fractional samples (a platform recording sub-ms figures) are read by linear interpolation', () => {
    expect(wholeMsPercentile([1.5, 2.5], 50)).to.be.closeTo(2, 1e-9);
    expect(wholeMsPercentile([3.25], 90)).to.equal(3.25);
  });

  it('the report ends with the verdict line', () => {
    const lines = formatRows(compareStages({ a: of([100, 5]) }, { a: of([100, 50]) }, 0.1), 5, 50, 0.1);
    expect(lines.at(-1)).to.match(/^PASS \(every stage's p50 and p90 at 50 calls within 10 % of 5/);
    expect(lines[0]).to.match(/^a +@5: p50 100\.0 p90 100\.4 \(n 5\) +@50: p50 100\.0 p90 100\.4 \(n 50\) +ratio p50 1\.00 p90 1\.00 +ok$/);
  });
});
