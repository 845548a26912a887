/** Flows: the list, and a new empty flow. */
import { useState } from 'preact/hooks';
import { api, type Flow } from '../api';
import { ErrorLine, Section, Table, shortTime, useAction, useLoad } from '../components/common';
import { go, href } from '../router';

export function FlowsPage() {
  const flows = useLoad(() => api.all<Flow>('/flows'));
  const [name, setName] = useState('');
  const create = useAction();
  const submit = (ev: Event) => {
    ev.preventDefault();
    void create.run(async () => {
      const f = await api.post<Flow>('/flows', { name: name.trim(), actions: [{ type: 'answer' }, { type: 'talk', option: { text: 'Hello.', language: 'en-US' } }, { type: 'hangup' }] });
      go(`/flows/${f.id}`);
    });
  };
  return (
    <>
      <Section title="Flows">
        <ErrorLine error={flows.error} />
        <Table
          label="Flows"
          rows={flows.data ?? []}
          rowKey={(f) => f.id}
          empty={flows.loading ? 'Loading…' : 'No flows yet.'}
          columns={[
            { title: 'Name', cell: (f) => <a href={href('flows', f.id)}>{f.name || f.id.slice(0, 8)}</a> },
            { title: 'Actions', cls: 'num', cell: (f) => f.actions.length },
            {
              title: 'First actions',
              cell: (f) =>
                f.actions
                  .slice(0, 4)
                  .map((a) => a.type)
                  .join(' → ') + (f.actions.length > 4 ? ' …' : ''),
            },
            { title: 'Updated', cell: (f) => shortTime(f.tm_update) },
          ]}
        />
      </Section>
      <Section title="New flow">
        <form class="row-form" onSubmit={submit} aria-label="New flow">
          <label>
            Name
            <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" class="primary" disabled={create.busy}>
            Create
          </button>
        </form>
        <ErrorLine error={create.error} />
      </Section>
    </>
  );
}
