/**
 * The mixed soak (issue 52; testkit/reliability/soak.ts): the platform's three processes supervised as
 * children, calls of 10 s to 10 min, conference callers, AI calls (ai_talk on a stand-in of OpenAI's
 * Realtime API: the caller speaks and hears the agent), registrations and API reads and writes for
 * --minutes (default 30). Prints the per-window p99 of API requests and call set-ups, RSS and open
 * descriptors of each process (first sample after the warm-up against the last), and PASS/FAIL:
 * 0 unplanned hang-ups (AI calls included; every answered AI call heard the agent), 0 failed registrations or API requests, no call row left open, no process
 * restarted, RSS within ±--flat-pct (default 10) of the first sample after the warm-up (against the last
 * under load), the live heap (after a forced collection: scripts/soak/probe.cjs) once every call ended
 * at most --flat-pct above the first sample after the warm-up, open descriptors after the drain within
 * it of those before the load. RSS alone cannot tell a leak from the allocator keeping what it got
 * (growth that settles); the heap after a collection can, and is printed per window.
 *
 *   source .data/env && npx tsx scripts/soak/mixed.ts [--minutes 30] [--warmup-minutes (the longest call, 5 to a third of the run)] [--api-rps 5]
 *        [--calls-per-wave 3] [--wave-seconds 30] [--ai-calls-per-wave 2] [--min-call 10] [--max-call 600] [--flat-pct 10]
 *
 * SIGINT or SIGTERM stops the platform's processes and the callers before the script exits (a second
 * one exits at once).
 */
import { runSoak, type SoakResult } from '../../testkit/reliability/soak';
import { killAllSipp } from '../../testkit/media-app/harness';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};

const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '-');

function report(r: SoakResult, flatPct: number): boolean {
  const c = r.calls;
  const k = r.conference;
  const a = r.ai;
  console.log(
    `\nsoak ${(r.seconds / 60).toFixed(1)} min: calls ${c.placed} (answered ${c.answered}, unplanned ${c.unplanned}); conference callers ${k.placed} (answered ${k.answered}, unplanned ${k.unplanned})`,
  );
  console.log(`AI calls ${a.placed} (answered ${a.answered}, heard the agent ${a.heard}, unplanned ${a.unplanned}); caller turns the vendor heard ${a.turns}`);
  console.log(`registrations ${r.registrations.ok} ok, ${r.registrations.failed} failed; API ${r.api.requests} requests, ${r.api.failed} failed; call rows left open ${r.rowsLeft}`);
  const names = r.procs.map((p) => p.name);
  // each process's live heap at the end of the window (its last sample in it)
  const heapAt = (name: string, to: number) => r.samples[name]!.filter((x) => x.t < to).at(-1)?.heapMB ?? NaN;
  const size = r.windows.length > 1 ? r.windows[1]!.from - r.windows[0]!.from : r.seconds;
  console.log(`\nwindow (s) | API n / p99 ms | call set-up n / p99 ms | heap MB after GC (${names.join(' / ')})`);
  for (const w of r.windows) {
    const heaps = names.map((n) => heapAt(n, w.from + size).toFixed(1)).join(' / ');
    console.log(`${String(w.from).padStart(10)} | ${w.apiCount} / ${ms(w.apiP99)} | ${w.setupCount} / ${ms(w.setupP99)} | ${heaps}`);
  }
  let pass = c.unplanned === 0 && k.unplanned === 0 && a.unplanned === 0 && a.heard === a.answered && r.registrations.failed === 0 && r.api.failed === 0 && r.rowsLeft === 0;
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} %`;
  console.log('\nprocess     | RSS MB after warm-up → end of load (%) | heap MB after GC, after warm-up → drained (%) | fds before load → drained (%) | restarts');
  for (const p of r.procs) {
    // the heap may fall (the calls alive after the warm-up have ended): only growth is a leak
    const flat = Math.abs(p.rssPct) <= flatPct && p.heapPct <= flatPct && Math.abs(p.fdsPct) <= flatPct && p.restarts === 0;
    pass &&= flat;
    console.log(
      `${p.name.padEnd(11)} | ${p.first.rssMB.toFixed(1)} → ${p.last.rssMB.toFixed(1)} (${pct(p.rssPct)}) | ${p.first.heapMB.toFixed(1)} → ${p.drained.heapMB.toFixed(1)} (${pct(p.heapPct)}) | ${p.start.fds} → ${p.drained.fds} (${pct(p.fdsPct)}) | ${p.restarts} ${flat ? 'ok' : 'FAIL'}`,
    );
  }
  console.log(pass ? 'PASS' : 'FAIL');
  return pass;
}

/** SIGINT/SIGTERM: the soak stops its platform's processes (runSoak's signal); a second signal exits at once. */
function onSignals(ac: AbortController): void {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (ac.signal.aborted) {
        killAllSipp();
        process.exit(130);
      }
      console.error(`${sig}: stopping the platform's processes`);
      ac.abort(sig);
    });
  }
}

async function main(ac: AbortController): Promise<void> {
  const minutes = arg('minutes', 30);
  const flatPct = arg('flat-pct', 10);
  const maxCallS = arg('max-call', 600);
  // the warm-up lasts until the mix is steady: calls of up to --max-call each, so the number of calls up
  // at once (and with it the memory they hold) rises until the longest call's length has gone by; an RSS
  // taken earlier is compared with a later one at a higher concurrency (a third of the run at most)
  const warmupMinutes = Math.min(Math.max(5, maxCallS / 60), minutes / 3);
  const r = await runSoak({
    seconds: Math.round(minutes * 60),
    warmupSeconds: Math.round(arg('warmup-minutes', warmupMinutes) * 60),
    windowSeconds: Math.max(30, Math.round((minutes * 60) / 10)),
    sampleSeconds: 10,
    callWaveSeconds: arg('wave-seconds', 30),
    callsPerWave: arg('calls-per-wave', 3),
    minCallSeconds: arg('min-call', 10),
    maxCallSeconds: maxCallS,
    conferenceWaveSeconds: arg('wave-seconds', 30) * 2,
    conferenceParties: 3,
    aiWaveSeconds: arg('wave-seconds', 30),
    aiCallsPerWave: arg('ai-calls-per-wave', 2),
    registerEverySeconds: 10,
    apiRps: arg('api-rps', 5),
    log: (l) => console.log(l),
    signal: ac.signal,
  });
  process.exitCode = report(r, flatPct) ? 0 : 1;
}

const ac = new AbortController();
onSignals(ac);
main(ac)
  .catch((e: Error) => {
    // stopped by a signal: its processes are stopped, the reason is enough
    console.error(ac.signal.aborted ? e.message : e);
    process.exitCode = ac.signal.aborted ? 130 : 1;
  })
  .finally(() => {
    killAllSipp();
    process.exit();
  });
