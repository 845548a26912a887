/**
 * Runs voice agent eval scenarios against a platform, for CI (docs/evals.md "From CI"):
 *
 *   OPENVOICE_ACCESSKEY=… OPENVOICE_API=http://127.0.0.1:8080 npx tsx scripts/eval.ts RUN.json
 *
 * RUN.json: {"api"? (must be OPENVOICE_API's origin: the key goes nowhere else), "scenarios"?: [scenario bodies], "scenario_ids"?: [...], "calls"?, "concurrency"?, "timeout_s"?}.
 * Prints a row per call and each failing check with its evidence. Exit status 0 when every check
 * passed, 1 when a check failed, 2 when the run failed or could not be made.
 */
import { readFileSync } from 'node:fs';
import { runEvalFile } from './eval/run-file';

async function main(): Promise<number> {
  const file = process.argv[2];
  const accesskey = process.env.OPENVOICE_ACCESSKEY ?? '';
  if (!file || !accesskey) {
    process.stderr.write('usage: OPENVOICE_ACCESSKEY=… OPENVOICE_API=… npx tsx scripts/eval.ts RUN.json\n');
    return 2;
  }
  return runEvalFile(readFileSync(file, 'utf8'), { accesskey, api: process.env.OPENVOICE_API, out: (l) => process.stdout.write(`${l}\n`) });
}

main().then(
  (code) => process.exit(code),
  (e: Error) => {
    process.stderr.write(`${e.stack ?? e.message}\n`);
    process.exit(2);
  },
);
