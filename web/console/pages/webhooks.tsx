/** The customer's webhook (method and URI, PUT /customer) and the delivery log (GET /webhook_deliveries). */
import { useEffect, useState } from 'preact/hooks';
import { api, type Customer } from '../api';
import { ErrorLine, Section, Table, shortTime, useAction, useLoad } from '../components/common';

interface Delivery { id: string; event_type: string; uri: string; method: string; status: string; attempts: number; response_status: number; error: string; tm_create: string | null }

export function WebhooksPage() {
  const customer = useLoad(() => api.get<Customer>('/customer'));
  const log = useLoad(() => api.get<{ result: Delivery[] }>('/webhook_deliveries', { page_size: 50 }).then((p) => p.result));
  const [method, setMethod] = useState('POST');
  const [uri, setUri] = useState('');
  const [saved, setSaved] = useState(false);
  const save = useAction();
  useEffect(() => {
    if (customer.data) {
      setMethod(customer.data.webhook_method || 'POST');
      setUri(customer.data.webhook_uri);
    }
  }, [customer.data]);

  const submit = (ev: Event) => {
    ev.preventDefault();
    setSaved(false);
    void save.run(async () => {
      customer.set(await api.put<Customer>('/customer', { webhook_method: method, webhook_uri: uri.trim() }));
      setSaved(true);
    });
  };

  return (
    <>
      <Section title="Webhook">
        <p>Every event of the account is sent to this address; the receiver answers 200 within 5 seconds and filters on <code>event_type</code>.</p>
        <form class="row-form" onSubmit={submit} aria-label="Webhook settings">
          <label>
            Method
            <select value={method} onChange={(e) => setMethod(e.currentTarget.value)}>
              {['POST', 'PUT', 'GET', 'DELETE'].map((m) => <option>{m}</option>)}
            </select>
          </label>
          <label class="grow">
            URI
            <input name="webhook_uri" type="url" placeholder="https://example.com/hooks/voice" value={uri} onInput={(e) => setUri(e.currentTarget.value)} />
          </label>
          <button type="submit" class="primary" disabled={save.busy}>Save</button>
        </form>
        <ErrorLine error={save.error || customer.error} />
        {saved && <p class="notice" role="status">Saved.</p>}
        <p class="hint">A “send a test event” button needs an API operation the platform does not have yet.</p>
      </Section>
      <Section title="Delivery log" actions={<button onClick={log.reload}>Refresh</button>}>
        <ErrorLine error={log.error} />
        <Table
          label="Webhook deliveries"
          rows={log.data ?? []}
          rowKey={(d) => d.id}
          empty={log.loading ? 'Loading…' : 'No deliveries yet.'}
          columns={[
            { title: 'When', cell: (d) => shortTime(d.tm_create) },
            { title: 'Event', cell: (d) => d.event_type },
            { title: 'Result', cell: (d) => <span class={`badge wh-${d.status}`}>{d.status}</span> },
            { title: 'HTTP', cls: 'num', cell: (d) => d.response_status || '' },
            { title: 'Attempts', cls: 'num', cell: (d) => d.attempts },
            { title: 'Error', cell: (d) => d.error },
          ]}
        />
      </Section>
    </>
  );
}
