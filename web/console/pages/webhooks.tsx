/**
 * The customer's webhook (method and URI, PUT /customer), its signing secret (shown masked; a new one
 * from POST /customer/webhook_secret is shown whole once), a test event (POST /customer/webhook_test,
 * followed in GET /webhook_deliveries?event_id= until it is no longer pending) and the delivery log.
 */
import { useState } from 'preact/hooks';
import { api, canAdmin, type Customer, type Page } from '../api';
import { useConsole } from '../context';
import { ErrorLine, type Loaded, Section, Table, shortTime, useAction, useLoad } from '../components/common';

interface Delivery {
  id: string;
  event_type: string;
  uri: string;
  method: string;
  status: string;
  attempts: number;
  response_status: number;
  error: string;
  tm_create: string | null;
}

export function WebhooksPage() {
  const customer = useLoad(() => api.get<Customer>('/customer'));
  const log = useLoad(() => api.get<{ result: Delivery[] }>('/webhook_deliveries', { page_size: 50 }).then((p) => p.result));

  return (
    <>
      <Section title="Webhook">
        <p>
          Every event of the account is sent to this address; the receiver answers 200 within 5 seconds and filters on <code>event_type</code>.
        </p>
        {customer.data ? <WebhookForm customer={customer.data} onSaved={customer.set} /> : <ErrorLine error={customer.error} />}
        {customer.loading && !customer.data && <p>Loading…</p>}
      </Section>
      {customer.data && <SigningSecret customer={customer.data} onRotated={customer.reload} />}
      <TestEvent canSend={!!customer.data?.webhook_uri} onDone={log.reload} />
      <DeliveryLog log={log} />
    </>
  );
}

/**
 * The secret the deliveries are signed with: masked as the API reads it (its last 4 characters); a new
 * one replaces it at once and is shown here whole, the only time it is. Only an admin may make one (the
 * route is admin's): the others see the masked secret and who can change it.
 */
function SigningSecret({ customer, onRotated }: { customer: Customer; onRotated: () => void }) {
  const { me } = useConsole();
  const rotate = useAction();
  const [fresh, setFresh] = useState('');
  const run = () => {
    if (!confirm('Make a new signing secret? Deliveries are signed with it at once: receivers checking the old one refuse them until they have the new one.')) return;
    void rotate.run(async () => {
      const c = await api.post<Customer>('/customer/webhook_secret');
      setFresh(c.webhook_secret ?? '');
      // the page keeps only the masked form: read again, as the API masks it
      onRotated();
    });
  };
  return (
    <Section
      title="Signing secret"
      actions={
        canAdmin(me) ? (
          <button onClick={run} disabled={rotate.busy} data-action="webhook-secret-rotate">
            New secret
          </button>
        ) : (
          <span class="muted" data-field="webhook-secret-admin-only">
            An admin makes a new one
          </span>
        )
      }
    >
      <p>
        Each delivery carries <code>X-Webhook-Signature</code>, an HMAC-SHA256 with this secret: <code data-field="webhook-secret-masked">{customer.webhook_secret}</code>
      </p>
      {fresh && (
        <p class="notice" role="status">
          Copy the new secret now, it is not shown again:{' '}
          <code class="secret" data-field="webhook-secret">
            {fresh}
          </code>
        </p>
      )}
      <ErrorLine error={rotate.error} />
    </Section>
  );
}

/** A test event sent to the saved webhook, followed in the delivery log until it is no longer pending. */
function TestEvent({ canSend, onDone }: { canSend: boolean; onDone: () => void }) {
  const test = useAction();
  const [testEvent, setTestEvent] = useState<{ id: string; delivery: Delivery | null } | null>(null);

  const sendTest = () =>
    test.run(async () => {
      setTestEvent(null);
      const sent = await api.post<{ event_id: string }>('/customer/webhook_test');
      setTestEvent({ id: sent.event_id, delivery: null });
      // the delivery is written when the event is read from the stream; it leaves pending once sent
      for (let i = 0; i < 60; i++) {
        const d = (await api.get<Page<Delivery>>('/webhook_deliveries', { event_id: sent.event_id })).result[0] ?? null;
        if (d) setTestEvent({ id: sent.event_id, delivery: d });
        if (d && d.status !== 'pending') break;
        await new Promise((r) => setTimeout(r, 500));
      }
      onDone();
    });
  const d = testEvent?.delivery;

  return (
    <Section
      title="Test event"
      actions={
        <button onClick={sendTest} disabled={test.busy || !canSend} data-action="webhook-test">
          Send a test event
        </button>
      }
    >
      <p>
        Sends a <code>webhook_test</code> event to the saved webhook, the way every event goes (signed, retried, through the platform's egress policy).
      </p>
      <ErrorLine error={test.error} />
      {testEvent && (
        <p class="notice" role="status" data-field="webhook-test" data-status={d?.status ?? 'queued'}>
          Test event <code>{testEvent.id.slice(0, 8)}</code>:{' '}
          {!d ? (
            'queued…'
          ) : (
            <>
              <span class={`badge wh-${d.status}`}>{d.status}</span> {d.response_status ? `HTTP ${d.response_status}` : ''} {d.error}
            </>
          )}
        </p>
      )}
    </Section>
  );
}

function DeliveryLog({ log }: { log: Loaded<Delivery[]> }) {
  return (
    <Section
      title="Delivery log"
      actions={
        <button onClick={log.reload} data-action="refresh-log">
          Refresh
        </button>
      }
    >
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
  );
}

/**
 * The method and URI, filled from the customer as loaded: the form is not shown before that, so
 * nothing typed into it is overwritten when the customer arrives.
 */
function WebhookForm({ customer, onSaved }: { customer: Customer; onSaved: (c: Customer) => void }) {
  const [method, setMethod] = useState(customer.webhook_method || 'POST');
  const [uri, setUri] = useState(customer.webhook_uri);
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const submit = (ev: Event) => {
    ev.preventDefault();
    setSaved(false);
    void save.run(async () => {
      onSaved(await api.put<Customer>('/customer', { webhook_method: method, webhook_uri: uri.trim() }));
      setSaved(true);
    });
  };
  return (
    <>
      <form class="row-form" onSubmit={submit} aria-label="Webhook settings">
        <label>
          Method
          <select value={method} onChange={(e) => setMethod(e.currentTarget.value)}>
            {['POST', 'PUT', 'GET', 'DELETE'].map((m) => (
              <option>{m}</option>
            ))}
          </select>
        </label>
        <label class="grow">
          URI
          <input name="webhook_uri" type="url" placeholder="https://example.com/hooks/voice" value={uri} onInput={(e) => setUri(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary" disabled={save.busy}>
          Save
        </button>
      </form>
      <ErrorLine error={save.error} />
      {saved && (
        <p class="notice" role="status">
          Saved.
        </p>
      )}
    </>
  );
}
