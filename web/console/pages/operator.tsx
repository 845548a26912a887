/**
 * The operator view (ProjectSuperAdmin only; the navigation hides it from everyone else and the API
 * refuses them anyway): customers, billing accounts with balance adds, providers, trunks, routes.
 */
import { useState } from 'preact/hooks';
import { api, type Customer } from '../api';
import { ErrorLine, Section, Table, useAction, useLoad } from '../components/common';

interface BillingAccount {
  id: string;
  customer_id: string;
  name: string;
  status: string;
  balance: number;
}
interface Provider {
  id: string;
  name: string;
  type: string;
  hostname: string;
}
interface Trunk {
  id: string;
  name: string;
  domain_name: string;
  auth_types: string[];
  customer_id: string;
}
interface SipRoute {
  id: string;
  name: string;
  customer_id: string;
  provider_id: string;
  priority: number;
  target: string;
}

export function OperatorPage() {
  return (
    <div class="operator">
      <CustomerSections />
      <SipSections />
    </div>
  );
}

/** The customers and their billing accounts (with balance adds). */
function CustomerSections() {
  const customers = useLoad(() => api.all<Customer>('/customers'));
  const accounts = useLoad(() => api.all<BillingAccount>('/billing-accounts'));
  const email = (cid: string) => (customers.data ?? []).find((c) => c.id === cid)?.email ?? cid.slice(0, 8);
  return (
    <>
      <Section title="Customers">
        <ErrorLine error={customers.error} />
        <Table
          label="Customers"
          rows={customers.data ?? []}
          rowKey={(c) => c.id}
          columns={[
            { title: 'Customer', cell: (c) => c.name || c.email },
            { title: 'Email', cell: (c) => c.email },
            { title: 'Status', cell: (c) => <span class={`badge cs-${c.status}`}>{c.status}</span> },
          ]}
        />
      </Section>
      <Section title="Billing">
        <ErrorLine error={accounts.error} />
        <Table
          label="Billing accounts"
          rows={accounts.data ?? []}
          rowKey={(a) => a.id}
          columns={[
            { title: 'Customer', cell: (a) => email(a.customer_id) },
            { title: 'Status', cell: (a) => a.status },
            { title: 'Balance', cls: 'num', cell: (a) => a.balance.toFixed(2) },
            { title: 'Add credit', cell: (a) => <BalanceAdd id={a.id} onDone={accounts.reload} /> },
          ]}
        />
      </Section>
    </>
  );
}

/** What calls go out through: providers, trunks and routes. */
function SipSections() {
  const providers = useLoad(() => api.all<Provider>('/providers'));
  const trunks = useLoad(() => api.all<Trunk>('/trunks'));
  const routes = useLoad(() => api.all<SipRoute>('/routes'));
  return (
    <>
      <Section title="Providers">
        <ErrorLine error={providers.error} />
        <Table
          label="Providers"
          rows={providers.data ?? []}
          rowKey={(p) => p.id}
          empty="No providers."
          columns={[
            { title: 'Name', cell: (p) => p.name },
            { title: 'Type', cell: (p) => p.type },
            { title: 'Host', cell: (p) => <code>{p.hostname}</code> },
          ]}
        />
      </Section>
      <Section title="Trunks">
        <ErrorLine error={trunks.error} />
        <Table
          label="Trunks"
          rows={trunks.data ?? []}
          rowKey={(t) => t.id}
          empty="No trunks."
          columns={[
            { title: 'Name', cell: (t) => t.name },
            { title: 'Domain', cell: (t) => <code>{t.domain_name}</code> },
            { title: 'Auth', cell: (t) => (t.auth_types ?? []).join(', ') },
          ]}
        />
      </Section>
      <Section title="Routes">
        <ErrorLine error={routes.error} />
        <Table
          label="Routes"
          rows={routes.data ?? []}
          rowKey={(r) => r.id}
          empty="No routes."
          columns={[
            { title: 'Name', cell: (r) => r.name },
            { title: 'Target', cell: (r) => r.target },
            { title: 'Priority', cls: 'num', cell: (r) => r.priority },
            { title: 'Provider', cell: (r) => (providers.data ?? []).find((p) => p.id === r.provider_id)?.name ?? r.provider_id.slice(0, 8) },
          ]}
        />
      </Section>
    </>
  );
}

function BalanceAdd({ id, onDone }: { id: string; onDone: () => void }) {
  const [amount, setAmount] = useState('');
  const act = useAction();
  const submit = (ev: Event) => {
    ev.preventDefault();
    void act.run(async () => {
      await api.post(`/billing-accounts/${id}/balance-add`, { balance: Number(amount) });
      setAmount('');
      onDone();
    });
  };
  return (
    <form class="inline-form" onSubmit={submit}>
      <input type="number" min="0.01" step="0.01" required aria-label="Amount to add" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />
      <button type="submit" disabled={act.busy}>
        Add
      </button>
      {act.error && <span class="error">{act.error}</span>}
    </form>
  );
}
