/** Access keys: create (the secret is shown once) and revoke. */
import { useState } from 'preact/hooks';
import { api, type Accesskey } from '../api';
import { ErrorLine, Section, Table, shortTime, useAction, useLoad } from '../components/common';

export function AccessKeysPage() {
  const keys = useLoad(() => api.all<Accesskey>('/accesskeys'));
  const [name, setName] = useState('');
  const [days, setDays] = useState('365');
  const [created, setCreated] = useState<Accesskey | null>(null);
  const act = useAction();

  const submit = (ev: Event) => {
    ev.preventDefault();
    void act.run(async () => {
      const expire = Number(days) > 0 ? Math.round(Number(days) * 86400) : undefined;
      setCreated(await api.post<Accesskey>('/accesskeys', { name: name.trim(), ...(expire ? { expire } : {}) }));
      setName('');
      keys.reload();
    });
  };
  const revoke = (k: Accesskey) => {
    if (!confirm(`Revoke the access key “${k.name || k.id.slice(0, 8)}”? Programs using it stop working at once.`)) return;
    void act.run(async () => {
      await api.del(`/accesskeys/${k.id}`);
      keys.reload();
    });
  };

  return (
    <>
      <Section title="Create an access key">
        <form class="row-form" onSubmit={submit} aria-label="Create an access key">
          <label>
            Name
            <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Valid for (days)
            <input name="days" type="number" min="1" value={days} onInput={(e) => setDays(e.currentTarget.value)} />
          </label>
          <button type="submit" class="primary" disabled={act.busy}>
            Create
          </button>
        </form>
        {created?.token && (
          <p class="notice" role="status">
            Copy the key now, it is not shown again:{' '}
            <code class="secret" data-field="accesskey">
              {created.token}
            </code>
          </p>
        )}
        <ErrorLine error={act.error} />
      </Section>
      <Section title="Access keys">
        <ErrorLine error={keys.error} />
        <Table
          label="Access keys"
          rows={keys.data ?? []}
          rowKey={(k) => k.id}
          empty="No access keys."
          columns={[
            { title: 'Name', cell: (k) => k.name },
            { title: 'Created', cell: (k) => shortTime(k.tm_create) },
            { title: 'Expires', cell: (k) => shortTime(k.tm_expire) },
            {
              title: '',
              cell: (k) => (
                <button class="danger" onClick={() => revoke(k)}>
                  Revoke
                </button>
              ),
            },
          ]}
        />
      </Section>
    </>
  );
}
