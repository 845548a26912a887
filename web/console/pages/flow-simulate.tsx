/**
 * The flow page's Simulate panel: a script of what the caller does (digits, speech, variables...)
 * runs through the API (POST /flows/{id}/simulate for the saved flow, POST /flows/simulate for the
 * edited JSON before it is saved), and the path the flow took is shown step by step: each action
 * with its options as the runner substituted them, the digits pressed and collected, the media,
 * HTTP not sent, and how it ended. The API's error envelope is shown as is.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorLine, Section, useAction } from '../components/common';
import { summary } from '../components/action-words';

/** One timeline entry of the answer (POST /flows/{id}/simulate). */
export interface SimEntry {
  t: number;
  at: string;
  activeflow_id: string;
  event: string;
  [k: string]: unknown;
}

export interface Simulation {
  outcome: string;
  duration_ms: number;
  timeline: SimEntry[];
  timeline_truncated?: boolean;
  activeflows: { id: string; status: string; end_reason?: string; error?: string }[];
}

/** The caller presses 1 three seconds in and says something at six; the flow's variables stay as they are. */
export const DEFAULT_SCRIPT = JSON.stringify({ events: [{ at: 3000, dtmf: '1' }], speech: [{ at: 6000, duration: 1500 }], variables: {} }, null, 2);

const OUTCOME: Record<string, string> = {
  done: 'the flow ran to its end',
  stalled: 'the flow waits for something the script never does',
  time_limit: 'stopped at the virtual time limit',
  real_time_limit: 'stopped: the simulation took too long',
};

export function SimulatePanel({ flowId, edited, dirty, actions }: { flowId: string; edited: string; dirty: boolean; actions: { id?: string; type: string }[] }) {
  const [script, setScript] = useState(DEFAULT_SCRIPT);
  const [source, setSource] = useState<'saved' | 'edited' | ''>('');
  const [problem, setProblem] = useState('');
  const [result, setResult] = useState<{ sim: Simulation; of: string } | null>(null);
  const run = useAction();
  const which = source || (dirty ? 'edited' : 'saved');

  const onRun = () => {
    setProblem('');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(script) as Record<string, unknown>;
    } catch (e) {
      setProblem(`The script is not valid JSON: ${(e as Error).message}`);
      return;
    }
    let path = `/flows/${flowId}/simulate`;
    if (which === 'edited') {
      let flow: { actions?: unknown; on_complete_flow_id?: unknown };
      try {
        flow = JSON.parse(edited) as typeof flow;
      } catch (e) {
        setProblem(`The edited flow is not valid JSON: ${(e as Error).message}`);
        return;
      }
      path = '/flows/simulate';
      body = { ...body, actions: flow.actions, ...(typeof flow.on_complete_flow_id === 'string' ? { on_complete_flow_id: flow.on_complete_flow_id } : {}) };
    }
    void run.run(async () => {
      setResult(null);
      const sim = await api.post<Simulation>(path, body);
      setResult({ sim, of: which === 'edited' ? 'the edited JSON (not saved)' : 'the saved flow' });
    });
  };

  return (
    <Section title="Simulate">
      <p class="hint">
        Runs the flow on a virtual call, on virtual time, with the platform's own flow runner. Script: <code>events</code> (at ms: <code>dtmf</code>, <code>hangup</code>), <code>speech</code> (at,
        duration), <code>variables</code>, <code>start_time</code>, <code>http</code> answers. No HTTP request is sent.
      </p>
      <fieldset class="row-form" aria-label="Flow to simulate">
        <label class="inline">
          <input type="radio" name="sim-source" value="saved" checked={which === 'saved'} onChange={() => setSource('saved')} /> The saved flow
        </label>
        <label class="inline">
          <input type="radio" name="sim-source" value="edited" checked={which === 'edited'} onChange={() => setSource('edited')} /> The edited JSON
          {dirty ? ' (changed, not saved)' : ''}
        </label>
      </fieldset>
      <label class="block">
        Script of the call (JSON)
        <textarea class="code sim-script" rows={8} spellcheck={false} value={script} onInput={(e) => setScript(e.currentTarget.value)} aria-describedby="sim-status" />
      </label>
      <div class="buttons">
        <button class="primary" data-action="simulate" onClick={onRun} disabled={run.busy}>
          {run.busy ? 'Simulating…' : 'Simulate'}
        </button>
        <button onClick={() => setScript(DEFAULT_SCRIPT)}>Default script</button>
      </div>
      <div id="sim-status" aria-live="polite">
        <ErrorLine error={problem || run.error} />
        {result && <SimPath sim={result.sim} of={result.of} actions={actions} />}
      </div>
    </Section>
  );
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 2)} s`;
}

/** Actions whose next step depends on the call: the path says where each one went. */
const JUMPS = /^(branch|goto|condition_|compare)/;

function SimPath({ sim, of, actions }: { sim: Simulation; of: string; actions: { id?: string; type: string }[] }) {
  const steps = sim.timeline.filter((e) => e.event === 'action').length;
  // step names of action ids: the flow's own, and those the run executed (ids the API generated)
  const stepOf = new Map<string, string>();
  actions.forEach((a, i) => a.id && stepOf.set(a.id, `step ${i + 1} (${a.type})`));
  for (const e of sim.timeline) {
    if (e.event === 'action' && e.depth === 0 && typeof e.index === 'number' && typeof e.action_id === 'string') stepOf.set(e.action_id, `step ${e.index + 1} (${String(e.type)})`);
  }
  const wentTo = (i: number): string => {
    const from = sim.timeline[i]!;
    const next = sim.timeline.slice(i + 1).find((e) => e.activeflow_id === from.activeflow_id && (e.event === 'action' || e.event === 'activeflow_ended'));
    if (!next) return '';
    return next.event === 'action' ? (stepOf.get(String(next.action_id)) ?? String(next.type)) : 'the end of the flow';
  };
  const last = sim.activeflows[sim.activeflows.length - 1];
  return (
    <div class="sim-result" data-outcome={sim.outcome}>
      <p class="notice" data-field="sim-summary">
        Simulated {of}: {OUTCOME[sim.outcome] ?? sim.outcome}; {steps} action{steps === 1 ? '' : 's'} in {seconds(sim.duration_ms)}
        {last?.end_reason ? `, ended: ${last.end_reason}` : ''}
        {last?.error ? ` (${last.error})` : ''}.
      </p>
      <ol class="timeline sim-path" aria-label="Path the flow took">
        {sim.timeline.map((e, i) => (
          <li key={i} data-t={e.t} data-event={e.event} data-what={what(e)}>
            <time>+{seconds(e.t)}</time> <Entry e={e} stepOf={stepOf} />
            {e.event === 'action' && JUMPS.test(String(e.type)) && wentTo(i) && (
              <p class="next" data-field="went-to">
                → went to {wentTo(i)}
              </p>
            )}
          </li>
        ))}
      </ol>
      {sim.timeline_truncated && <p class="hint">The path is cut after {sim.timeline.length} entries.</p>}
    </div>
  );
}

/** What an entry is about: an action's type or a media command. */
function what(e: SimEntry): string {
  return String(e.type ?? e.command ?? '');
}

const str = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function Entry({ e, stepOf }: { e: SimEntry; stepOf: Map<string, string> }) {
  switch (e.event) {
    case 'action':
      return <ActionEntry e={e} stepOf={stepOf} />;
    case 'dtmf':
      return (
        <span>
          caller presses <kbd>{str(e.digit)}</kbd>
        </span>
      );
    case 'digits_received':
      return (
        <span>
          <strong>digits collected: “{str(e.digits)}”</strong> ({str(e.reason)})
        </span>
      );
    case 'speech':
      return <span>caller speaks for {seconds(Number(e.duration_ms))}</span>;
    case 'media':
      return <span class="summary">{media(e)}</span>;
    case 'media_stopped':
      return (
        <span class="summary">
          {str(e.command)} cut short after {seconds(Number(e.after_ms))}
        </span>
      );
    case 'http_not_sent':
      return (
        <span>
          HTTP {str(e.method)} {str(e.url)} not sent
          {e.refused ? `: refused, ${str(e.refused)}` : e.answer ? `; the script answered ${str((e.answer as { status: number }).status)}` : '; no answer in the script'}
        </span>
      );
    case 'activeflow_created':
      return <span>flow started</span>;
    case 'activeflow_ended':
      return (
        <span>
          <strong>flow ended: {str(e.end_reason)}</strong>
          {e.error ? ` (${str(e.error)})` : ''}
        </span>
      );
    case 'action_skipped':
      return (
        <span>
          {str(e.type)} skipped: {str(e.why)}
        </span>
      );
    case 'call_hangup':
    case 'remote_hangup':
      return <span>call hung up ({str(e.reason)})</span>;
    default: {
      const { t: _t, at: _at, activeflow_id: _id, event, ...rest } = e;
      return (
        <span>
          {event.replace(/_/g, ' ')} {Object.keys(rest).length > 0 ? <code>{JSON.stringify(rest)}</code> : null}
        </span>
      );
    }
  }
}

/** An action as run: its step, type, a one-line summary and its substituted options (action ids named by their step). */
function ActionEntry({ e, stepOf }: { e: SimEntry; stepOf: Map<string, string> }) {
  const o = (e.option ?? {}) as Record<string, unknown>;
  const where = e.depth === 0 && typeof e.index === 'number' ? `step ${e.index + 1}` : 'fetched step';
  return (
    <span>
      <strong>
        {where}: {str(e.type)}
      </strong>{' '}
      <span class="summary">{summary(String(e.type), o)}</span>
      {Object.keys(o).length > 0 && (
        <dl class="options">
          {Object.entries(o).map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd>{typeof v === 'string' ? (stepOf.get(v) ?? v) : targets(v, stepOf)}</dd>
            </>
          ))}
        </dl>
      )}
    </span>
  );
}

/** An option value, action ids inside it named by their step (branch target_ids). */
function targets(v: unknown, stepOf: Map<string, string>): string {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    return Object.entries(v)
      .map(([k, x]) => `${k} → ${typeof x === 'string' ? (stepOf.get(x) ?? x) : JSON.stringify(x)}`)
      .join(', ');
  }
  return JSON.stringify(v);
}

function media(e: SimEntry): string {
  const c = str(e.command);
  switch (c) {
    case 'talk':
      return `says “${str(e.text)}” (${seconds(Number(e.duration_ms))})`;
    case 'play':
      return `plays ${str(e.url)} (${seconds(Number(e.duration_ms))})`;
    case 'collect_digits':
      return `waits for digits: up to ${str(e.length) || '?'}, ${seconds(Number(e.duration))}${e.key ? `, ends on ${str(e.key)}` : ''}`;
    case 'answer':
      return 'the call is answered';
    case 'recording_start':
      return 'recording starts';
    case 'recording_stop':
      return `recording stops (${str(e.cause)}, ${seconds(Number(e.duration_ms))})`;
    case 'hangup':
      return `hangs up (${str(e.reason)})`;
    default:
      return c.replace(/_/g, ' ');
  }
}
