/**
 * The CI command's work (scripts/eval.ts, docs/evals.md "From CI"): reads a run file, creates its
 * inline scenarios, starts a run of them (and of any scenario_ids) through the public API, waits
 * for it to end, prints one table row per call and each failing check with its evidence, and
 * returns the exit status: 0 every check passed, 1 a check failed, 2 the run failed or could not be made.
 * The access key comes from the environment (OPENVOICE_ACCESSKEY), never from the file, and is never printed;
 * it goes only to OPENVOICE_API: a file's `api` is a check (it must name that origin), never where the key goes.
 */
import { z } from 'zod';
import type { EvalCallResult } from '../../core/evals/schema';

export const runFileSchema = z
  .object({
    api: z.string().url().optional().describe('the platform the file is meant for: must be the origin of OPENVOICE_API'),
    scenarios: z.array(z.record(z.string(), z.unknown())).default([]).describe('scenario bodies, created for this run'),
    scenario_ids: z.array(z.string()).default([]),
    calls: z.number().int().min(1).default(1),
    concurrency: z.number().int().min(1).default(1),
    timeout_s: z.number().int().min(1).default(900),
    // passed to POST /eval_runs as they are (the API checks them): versions side by side, a baseline run
    ai_id: z.string().optional(),
    versions: z.array(z.number().int()).optional(),
    baseline_run_id: z.string().optional(),
  })
  .strict();

export interface RunFileOptions {
  accesskey: string;
  /** OPENVOICE_API: the only place the access key is sent */
  api?: string;
  out: (line: string) => void;
  pollMs?: number;
}

interface RunJson {
  id: string;
  status: 'running' | 'finished' | 'failed';
  error: string;
  pass_rate: number | null;
  results: EvalCallResult[];
  by_version?: { version: number; calls: number; pass_rate: number | null }[];
  compare?: (Moves & { from_version: number; to_version: number }) | null;
  baseline?: (Moves & { run_id: string }) | null;
}

interface Moves {
  checks: { scenario_id: string; index: number; type: string; from: { passed: number; of: number }; to: { passed: number; of: number }; moved: string }[];
  latency: { stage: string; from: { p50: number; p95: number }; to: { p50: number; p95: number }; moved: string }[];
}

const percent = (r: number | null) => (r === null ? '-' : `${Math.round(r * 100)}%`);

/** The lines of what moved (two versions, or from the baseline): each check and latency stage. */
function movedLines(what: string, m: Moves, names: Map<string, string>): string[] {
  if (!m.checks.length && !m.latency.length) return [`${what}: nothing moved`];
  return [
    `${what}:`,
    ...m.checks.map(
      (c) => `  ${c.moved === 'worse' ? '✗' : '✓'} ${names.get(c.scenario_id) ?? c.scenario_id} check ${c.index + 1} ${c.type}: ${c.from.passed}/${c.from.of} → ${c.to.passed}/${c.to.of} (${c.moved})`,
    ),
    ...m.latency.map((l) => `  ${l.stage}: p50 ${l.from.p50} → ${l.to.p50} ms, p95 ${l.from.p95} → ${l.to.p95} ms (${l.moved})`),
  ];
}

class ApiFailure extends Error {}

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

async function call<T>(api: string, key: string, method: string, path: string, body?: unknown): Promise<T> {
  // an accesskey goes only as the accesskey query parameter (the spec's Authentication); the URL is never printed
  const res = await fetch(`${api}/v1.0${path}?accesskey=${encodeURIComponent(key)}`, {
    method,
    headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json().catch(() => null)) as { error?: { reason: string; message: string } } | null;
  if (!res.ok) throw new ApiFailure(`${method} ${path}: ${res.status} ${json?.error ? `${json.error.reason}: ${json.error.message}` : ''}`.trim());
  return json as T;
}

/** The table of a run: a row per call, each failing check under its call. */
export function runTable(run: RunJson, names: Map<string, string>): string[] {
  const rate = percent(run.pass_rate);
  const lines = [`run ${run.id}: ${run.status}${run.error ? ` (${run.error})` : ''}, ${run.results.length} call(s), pass rate ${rate}`];
  const rows = run.results.map((r, i) => {
    const slowest = r.turns.reduce<number | null>((m, t) => (t.latency_ms !== null && (m === null || t.latency_ms > m) ? t.latency_ms : m), null);
    const passed = r.checks.filter((c) => c.passed).length;
    return [
      names.get(r.scenario_id) ?? r.scenario_id,
      r.ai_version === undefined ? String(i + 1) : `${i + 1} v${r.ai_version}`,
      r.ended_by,
      slowest === null ? '-' : `${slowest} ms`,
      `${passed}/${r.checks.length}`,
      r.passed ? 'pass' : 'FAIL',
    ];
  });
  const head = ['scenario', 'call', 'ended_by', 'slowest turn', 'checks', ''];
  const width = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const row = (cells: string[]) =>
    cells
      .map((x, c) => x.padEnd(width[c]!))
      .join('  ')
      .trimEnd();
  lines.push(row(head));
  run.results.forEach((r, i) => {
    lines.push(row(rows[i]!));
    if (r.error) lines.push(`  ! ${r.error}`);
    for (const c of r.checks.filter((x) => !x.passed)) lines.push(`  ✗ ${c.type}: ${c.evidence}`);
  });
  for (const v of run.by_version ?? []) lines.push(`version ${v.version}: ${v.calls} call(s), pass rate ${percent(v.pass_rate)}`);
  if (run.compare) lines.push(...movedLines(`moved from version ${run.compare.from_version} to ${run.compare.to_version}`, run.compare, names));
  if (run.baseline) lines.push(...movedLines(`moved from the baseline run ${run.baseline.run_id}`, run.baseline, names));
  return lines;
}

export async function runEvalFile(text: string, o: RunFileOptions): Promise<number> {
  let file: z.output<typeof runFileSchema>;
  try {
    file = runFileSchema.parse(JSON.parse(text));
  } catch (e) {
    o.out(`the run file is not valid: ${e instanceof z.ZodError ? e.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') : (e as Error).message}`);
    return 2;
  }
  const api = (o.api ?? '').replace(/\/$/, '');
  if (!api) {
    o.out('no api: OPENVOICE_API names the platform (the access key goes nowhere else)');
    return 2;
  }
  // a run file is not trusted with the key: its `api` may only repeat OPENVOICE_API's origin
  if (file.api && originOf(file.api) !== originOf(api)) {
    o.out(`the run file's api (${originOf(file.api)}) is not OPENVOICE_API's origin (${originOf(api) ?? 'not a URL'}): refused, the access key goes only to OPENVOICE_API`);
    return 2;
  }
  try {
    const names = new Map<string, string>();
    const ids = [...file.scenario_ids];
    for (const s of file.scenarios) {
      const made = await call<{ id: string; name: string }>(api, o.accesskey, 'POST', '/eval_scenarios', s);
      names.set(made.id, made.name);
      ids.push(made.id);
    }
    const { ai_id, versions, baseline_run_id } = file;
    const body = {
      scenario_ids: ids,
      calls: file.calls,
      concurrency: file.concurrency,
      ...(ai_id ? { ai_id } : {}),
      ...(versions ? { versions } : {}),
      ...(baseline_run_id ? { baseline_run_id } : {}),
    };
    const started = await call<RunJson>(api, o.accesskey, 'POST', '/eval_runs', body);
    const deadline = Date.now() + file.timeout_s * 1000;
    let run = started;
    while (run.status === 'running') {
      if (Date.now() > deadline) {
        o.out(`run ${run.id}: still running after ${file.timeout_s} s`);
        return 2;
      }
      await new Promise((r) => setTimeout(r, o.pollMs ?? 1000));
      run = await call<RunJson>(api, o.accesskey, 'GET', `/eval_runs/${started.id}`);
    }
    for (const line of runTable(run, names)) o.out(line);
    if (run.status === 'failed') return 2;
    return run.results.every((r) => r.passed) ? 0 : 1;
  } catch (e) {
    if (!(e instanceof ApiFailure) && !(e instanceof TypeError)) throw e;
    o.out(`the platform refused or could not be reached: ${e.message}`);
    return 2;
  }
}
