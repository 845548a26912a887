// The evals concurrency benchmark's arithmetic (scripts/bench/evals/verdict.ts): ratios and the 10 % verdict.
import { expect } from 'chai';
import { compareStages, formatRows, ratio, verdict } from '../../scripts/bench/evals/verdict';

const s = (n: number, p50: number, p95: number) => ({ n, p50, p95, p99: p95 });

describe('evals benchmark verdict', () => {
  it('a stage within 10 % at both p50 and p95 passes; exactly 10 % passes; just over fails', () => {
    const rows = compareStages({ a: s(10, 100, 200), b: s(10, 100, 200) }, { a: s(50, 110, 220), b: s(50, 100, 221) }, 0.1);
    expect(rows.map((r) => [r.stage, r.pass])).to.deep.equal([
      ['a', true],
      ['b', false],
    ]);
    expect(rows[0]!.p50Ratio).to.be.closeTo(1.1, 1e-9);
    expect(rows[1]!.p95Ratio).to.be.closeTo(1.105, 1e-9);
    expect(verdict(rows)).to.equal('FAIL');
    expect(verdict(rows.slice(0, 1))).to.equal('PASS');
  });

  it('faster at the high load passes; a stage measured at one load only fails; no stage at all fails', () => {
    const rows = compareStages({ a: s(5, 100, 150), only_low: s(5, 10, 10) }, { a: s(50, 80, 120) }, 0.1);
    expect(rows.find((r) => r.stage === 'a')!.pass).to.equal(true);
    expect(rows.find((r) => r.stage === 'only_low')!.pass).to.equal(false);
    expect(verdict(compareStages({}, {}, 0.1))).to.equal('FAIL');
  });

  it('a 0 ms stage has no ratio: it passes only when 0 at the high load too', () => {
    expect(ratio(0, 5)).to.equal(null);
    expect(compareStages({ z: s(5, 0, 0) }, { z: s(50, 0, 0) }, 0.1)[0]!.pass).to.equal(true);
    expect(compareStages({ z: s(5, 0, 0) }, { z: s(50, 1, 1) }, 0.1)[0]!.pass).to.equal(false);
  });

  it('the report ends with the verdict line', () => {
    const lines = formatRows(compareStages({ a: s(5, 100, 150) }, { a: s(50, 100, 150) }, 0.1), 5, 50, 0.1);
    expect(lines.at(-1)).to.equal("PASS (every stage's p50 and p95 at 50 calls within 10 % of 5)");
    expect(lines[0]).to.match(/^a +@5: p50 100 p95 150 \(n 5\) +@50: p50 100 p95 150 \(n 50\) +ratio p50 1\.00 p95 1\.00 +ok$/);
  });
});
