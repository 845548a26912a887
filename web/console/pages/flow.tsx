/**
 * One flow: each action in words with its options, and a JSON editor whose text the API validates
 * on save (PUT /flows/{id}: the same rules as every other client; its error is shown as is), and the
 * simulator run on the saved flow or on the edited JSON (flow-simulate.tsx).
 */
import { useState } from 'preact/hooks';
import { api, type Action, type Flow } from '../api';
import { ErrorLine, Section, useAction, useLoad } from '../components/common';
import { href } from '../router';
import { summary } from '../components/action-words';
import { SimulatePanel } from './flow-simulate';

export function FlowPage({ id }: { id: string }) {
  const flow = useLoad(() => api.get<Flow>(`/flows/${id}`), [id]);
  /** The editor's text; null while it is the flow as loaded (or as last saved), so nothing typed is overwritten when it arrives. */
  const [edit, setText] = useState<string | null>(null);
  const [parseError, setParseError] = useState('');
  const [saved, setSaved] = useState('');
  const save = useAction();

  const f = flow.data;
  const loaded = f ? JSON.stringify(editable(f), null, 2) : '';
  const text = edit ?? loaded;

  const onSave = () => {
    setSaved('');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (e) {
      setParseError(`Not valid JSON: ${(e as Error).message}`);
      return;
    }
    setParseError('');
    void save.run(async () => {
      const f = await api.put<Flow>(`/flows/${id}`, body);
      flow.set(f);
      setText(null);
      setSaved('Saved.');
    });
  };

  if (!f)
    return (
      <Section title="Flow">
        <ErrorLine error={flow.error} />
        {flow.loading && <p>Loading…</p>}
      </Section>
    );
  return (
    <>
      <Section title={`Flow ${f.name || f.id.slice(0, 8)}`} actions={<a href={href('flows')}>All flows</a>}>
        {f.detail && <p>{f.detail}</p>}
        <ol class="actions" aria-label="Actions of the flow">
          {f.actions.map((a, i) => (
            <ActionView action={a} index={i} all={f.actions} />
          ))}
        </ol>
        {f.on_complete_flow_id && !/^0{8}-/.test(f.on_complete_flow_id) && (
          <p>
            When it completes: <a href={href('flows', f.on_complete_flow_id)}>the next flow</a>
          </p>
        )}
      </Section>
      <Section title="Edit as JSON">
        <label class="block">
          Flow (name, detail, actions, on_complete_flow_id)
          <textarea class="code" rows={18} spellcheck={false} value={text} data-flow-id={f.id} onInput={(e) => setText(e.currentTarget.value)} aria-describedby="flow-json-status" />
        </label>
        <div class="buttons">
          <button class="primary" onClick={onSave} disabled={save.busy}>
            Save
          </button>
          <button onClick={() => setText(null)}>Revert</button>
        </div>
        <div id="flow-json-status" aria-live="polite">
          <ErrorLine error={parseError || save.error} />
          {saved && (
            <p class="notice" data-field="saved">
              {saved}
            </p>
          )}
        </div>
      </Section>
      <SimulatePanel flowId={f.id} edited={text} dirty={text !== loaded} actions={f.actions} />
    </>
  );
}

function editable(f: Flow) {
  return { name: f.name, detail: f.detail, actions: f.actions, on_complete_flow_id: f.on_complete_flow_id };
}

/** One action in words: its type, what it does with its main option, then every option as key: value. */
function ActionView({ action, index, all }: { action: Action; index: number; all: Action[] }) {
  const o = action.option ?? {};
  const target = (uuid: unknown) => {
    const i = all.findIndex((a) => a.id === uuid);
    return i >= 0 ? `step ${i + 1} (${all[i]!.type})` : String(uuid);
  };
  const nextId = action.next_id && !/^0{8}-/.test(action.next_id) ? target(action.next_id) : '';
  return (
    <li class="action" id={action.id ? `a-${action.id}` : undefined}>
      <div class="action-head">
        <span class="step">{index + 1}</span> <strong class="type">{action.type}</strong> <span class="summary">{summary(action.type, o)}</span>
      </div>
      {Object.keys(o).length > 0 && (
        <dl class="options">
          {Object.entries(o).map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd>{/_id$|target/.test(k) && typeof v === 'string' ? target(v) : typeof v === 'string' ? v : JSON.stringify(v)}</dd>
            </>
          ))}
        </dl>
      )}
      {nextId && <p class="next">then goes to {nextId}</p>}
    </li>
  );
}
