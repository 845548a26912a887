/** Numbers: buy a virtual (+899, free) number, attach a flow to a number. */
import { useState } from 'preact/hooks';
import { api, type Flow, type NumberRow, type Page } from '../api';
import { ErrorLine, Section, Table, useAction, useLoad } from '../components/common';
import { href } from '../router';

const EMPTY = '00000000-0000-0000-0000-000000000000';
const randomVirtual = () => '+899' + String(Math.floor(Math.random() * 1e9)).padStart(9, '0');

export function FlowSelect(props: { flows: Flow[]; value: string; onChange: (id: string) => void; label: string }) {
  return (
    <select aria-label={props.label} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
      <option value={EMPTY}>— no flow —</option>
      {props.flows.map((f) => (
        <option value={f.id}>{f.name || f.id.slice(0, 8)}</option>
      ))}
    </select>
  );
}

export function NumbersPage() {
  const numbers = useLoad(() => api.get<Page<NumberRow>>('/numbers', { page_size: 100 }).then((p) => p.result));
  const flows = useLoad(() => api.all<Flow>('/flows'));
  const [number, setNumber] = useState(randomVirtual);
  const [flowId, setFlowId] = useState(EMPTY);
  const buy = useAction();
  const attach = useAction();

  const submit = (ev: Event) => {
    ev.preventDefault();
    void buy.run(async () => {
      await api.post('/numbers', { number: number.trim(), type: 'virtual', ...(flowId !== EMPTY ? { call_flow_id: flowId } : {}) });
      setNumber(randomVirtual());
      numbers.reload();
    });
  };

  return (
    <>
      <Section title="Buy a virtual number">
        <form class="row-form" onSubmit={submit} aria-label="Buy a virtual number">
          <label>
            Number
            <input name="number" value={number} pattern="\+899[0-9]{9}" title="+899 followed by 9 digits" onInput={(e) => setNumber(e.currentTarget.value)} />
          </label>
          <label>
            Call flow
            <FlowSelect label="Call flow of the new number" flows={flows.data ?? []} value={flowId} onChange={setFlowId} />
          </label>
          <button type="submit" class="primary" disabled={buy.busy}>
            Buy
          </button>
        </form>
        <p class="hint">Virtual numbers (+899) are free and routed inside the platform. Normal numbers need a verified identity.</p>
        <ErrorLine error={buy.error} />
      </Section>
      <Section title="Numbers">
        <ErrorLine error={numbers.error || attach.error} />
        <Table
          label="Numbers"
          rows={numbers.data ?? []}
          rowKey={(n) => n.id}
          empty={numbers.loading ? 'Loading…' : 'No numbers yet.'}
          columns={[
            { title: 'Number', cell: (n) => <code>{n.number}</code> },
            { title: 'Type', cell: (n) => n.type },
            { title: 'Status', cell: (n) => n.status },
            {
              title: 'Call flow',
              cell: (n) => (
                <FlowSelect
                  label={`Call flow of ${n.number}`}
                  flows={flows.data ?? []}
                  value={n.call_flow_id}
                  onChange={(id) => void attach.run(() => api.put(`/numbers/${n.id}`, { call_flow_id: id }).then(() => numbers.reload()))}
                />
              ),
            },
            { title: '', cell: (n) => (n.call_flow_id !== EMPTY ? <a href={href('flows', n.call_flow_id)}>open flow</a> : '') },
          ]}
        />
      </Section>
    </>
  );
}
