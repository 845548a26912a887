/**
 * Where a bench script writes its report: dist/bench/<area>.md (git-ignored). docs/benchmarks.md holds
 * one row per measure and is updated by hand from these reports; no script writes into docs/.
 */
import fs from 'node:fs';
import path from 'node:path';

export const REPORT_DIR = path.resolve(__dirname, '../../dist/bench');

/** The report file of one area, its folder made if missing. */
export function reportPath(area: string): string {
  fs.mkdirSync(REPORT_DIR, { recursive: true });
  return path.join(REPORT_DIR, `${area}.md`);
}

/** Writes `md` as the report of `area`, prints it, and says where it went. */
export function writeReport(area: string, md: string): void {
  const out = reportPath(area);
  fs.writeFileSync(out, md);
  process.stdout.write(md);
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
}
