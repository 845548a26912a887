/**
 * A run's page kept current by the run's events (docs/evals.md "Console"), never by polling: the page
 * subscribes to `eval_run:<id>` before it reads the run, so nothing falls between the read and the
 * subscription. `eval_run_progressed` adds the call in brief and the counts; `eval_run_finished` /
 * `_failed` set the final status and summary and read the run once more (its calls in full: checks with
 * evidence, turns). A socket that reopens reads the run again (events while it was down are not replayed).
 * Leaving the page drops the subscription and the reopen listener.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type EvalRun, type EvalRunEndedPayload, type EvalRunProgressedPayload } from '../api';
import { useConsole } from '../context';

/** What the events told since the page opened. */
export interface Heard {
  progressed: EvalRunProgressedPayload[];
  ended: EvalRunEndedPayload | null;
}

/** A call the events announced that the last read does not hold yet, at its place in the run's results. */
export type PendingCall = EvalRunProgressedPayload['call'] & { index: number };

export interface LiveRun {
  /** the last read, with what the events told on top (status, error, pass rate, latency) */
  run: EvalRun;
  pending: PendingCall[];
  done: number;
  planned: number;
}

/**
 * The last read and the events heard since, as one view: an event's call is `results[done - 1]` (a refused
 * call has no SIP Call-ID to tell it by), so the read's calls are not repeated and counts never go back.
 */
export function liveRun(run: EvalRun, heard: Heard): LiveRun {
  const byPlace = new Map<number, PendingCall>();
  for (const p of heard.progressed) if (p.done > run.results.length && !byPlace.has(p.done)) byPlace.set(p.done, { ...p.call, index: p.done - 1 });
  const pending = [...byPlace.values()].sort((a, b) => a.index - b.index);
  const last = heard.progressed.reduce<EvalRunProgressedPayload | null>((a, p) => (!a || p.done > a.done ? p : a), null);
  const ahead = last && last.done > run.results.length ? last : null;
  const done = ahead ? ahead.done : run.results.length;
  const planned = last?.planned ?? run.scenario_ids.length * run.calls * Math.max(1, run.versions.length);
  const ended = run.status === 'running' ? heard.ended : null;
  const told = ended ? { status: ended.status, error: ended.error, pass_rate: ended.pass_rate, latency: ended.latency } : ahead ? { pass_rate: ahead.passed / ahead.done } : {};
  return { run: { ...run, ...told }, pending, done: Math.max(done, ended?.calls ?? 0), planned };
}

/** GET /eval_runs/{id} followed by its events while the page shows it (the read's error, if the last failed). */
export function useLiveRun(id: string): { live: LiveRun | null; error: string } {
  const { events, topic } = useConsole();
  const [run, setRun] = useState<EvalRun | null>(null);
  const [error, setError] = useState('');
  const [heard, setHeard] = useState<Heard>({ progressed: [], ended: null });
  // the topic's name, not the console's function making it (a new one each render): the effect follows the name
  const runTopic = topic('eval_run', id);
  useEffect(() => {
    let mounted = true;
    let asked = 0;
    // only the latest read's answer applies (an earlier one may answer after it)
    const read = () => {
      const n = ++asked;
      api.get<EvalRun>(`/eval_runs/${encodeURIComponent(id)}`).then(
        (r) => mounted && n === asked && (setRun(r), setError('')),
        (e: unknown) => mounted && n === asked && setError(errorText(e)),
      );
    };
    const unsubscribe = events.subscribe(runTopic, (e) => {
      if (e.event_type === 'eval_run_progressed') {
        const p = e.data as EvalRunProgressedPayload;
        setHeard((h) => ({ ...h, progressed: [...h.progressed, p] }));
      } else if (e.event_type === 'eval_run_finished' || e.event_type === 'eval_run_failed') {
        const ended = e.data as EvalRunEndedPayload;
        setHeard((h) => ({ ...h, ended }));
        read();
      }
    });
    const offReopen = events.onReopen(read);
    read();
    return () => {
      mounted = false;
      unsubscribe();
      offReopen();
    };
  }, [events, runTopic, id]);
  return { live: run ? liveRun(run, heard) : null, error };
}
