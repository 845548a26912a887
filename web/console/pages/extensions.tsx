/**
 * Extensions: create one (its password is shown once), and provision a phone: the provisioning URL
 * (POST /extensions/{id}/provisioning-token) as a QR code the phone scans off the screen, with the
 * ten-minute expiry counting down.
 */
import { useState } from 'preact/hooks';
import { api, type Extension, type Page, type ProvisioningToken } from '../api';
import { ErrorLine, Section, Table, seconds, useAction, useLoad } from '../components/common';
import { Qr } from '../components/qr';
import { useNow } from './calls';

export function ExtensionsPage({ focus }: { focus?: string }) {
  const list = useLoad(() => api.get<Page<Extension>>('/extensions', { page_size: 100 }).then((p) => p.result));
  const [extension, setExtension] = useState('');
  const [name, setName] = useState('');
  const [created, setCreated] = useState<Extension | null>(null);
  const [selected, setSelected] = useState<string | undefined>(focus);
  const create = useAction();

  const submit = (ev: Event) => {
    ev.preventDefault();
    void create.run(async () => {
      const e = await api.post<Extension>('/extensions', { extension: extension.trim(), name: name.trim() || undefined });
      setCreated(e);
      setExtension('');
      setName('');
      setSelected(e.id);
      list.reload();
    });
  };
  const ext = (list.data ?? []).find((e) => e.id === selected) ?? (created?.id === selected ? created : undefined);

  return (
    <>
      <Section title="Create an extension">
        <form class="row-form" onSubmit={submit} aria-label="Create an extension">
          <label>
            Extension
            <input name="extension" required value={extension} onInput={(e) => setExtension(e.currentTarget.value)} />
          </label>
          <label>
            Name
            <input name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" class="primary" disabled={create.busy}>
            Create
          </button>
        </form>
        <ErrorLine error={create.error} />
        {created?.password && (
          <p class="notice" role="status">
            Extension <strong>{created.extension}</strong> created. Its SIP password, shown only now: <code class="secret">{created.password}</code>
          </p>
        )}
      </Section>
      {ext && <Provision ext={ext} key={ext.id} />}
      <Section title="Extensions">
        <ErrorLine error={list.error} />
        <Table
          label="Extensions"
          rows={list.data ?? []}
          rowKey={(e) => e.id}
          empty={list.loading ? 'Loading…' : 'No extensions yet.'}
          columns={[
            { title: 'Extension', cell: (e) => <code>{e.extension}</code> },
            { title: 'Name', cell: (e) => e.name },
            { title: 'Domain', cell: (e) => <code>{e.domain_name}</code> },
            { title: '', cell: (e) => <button onClick={() => setSelected(e.id)}>Provision a phone</button> },
          ]}
        />
      </Section>
    </>
  );
}

function Provision({ ext }: { ext: Extension }) {
  const [token, setToken] = useState<ProvisioningToken | null>(null);
  const issue = useAction();
  const now = useNow(250);
  const left = token ? Date.parse(token.expire) - now : 0;
  const expired = token !== null && left <= 0;
  const get = () => void issue.run(async () => setToken(await api.post<ProvisioningToken>(`/extensions/${ext.id}/provisioning-token`)));

  return (
    <Section title={`Provision a phone for ${ext.extension}`}>
      <p>Scan the code with the phone (Linphone: Assistant → Fetch remote configuration → QR code). The code holds the SIP password: show it only to the phone.</p>
      {!token && (
        <button class="primary" data-action="show-qr" onClick={get} disabled={issue.busy}>
          Show the QR code
        </button>
      )}
      <ErrorLine error={issue.error} />
      {token && !expired && (
        <div class="provision">
          <Qr text={token.url} label={`Provisioning QR code for extension ${ext.extension}`} />
          <div>
            <p class="countdown" aria-live="off">
              Expires in <strong data-field="countdown">{seconds(left)}</strong>
            </p>
            <p class="hint url">
              <code data-field="provisioning-url">{token.url}</code>
            </p>
            <button onClick={get}>New code</button> <button onClick={() => setToken(null)}>Hide</button>
          </div>
        </div>
      )}
      {expired && (
        <p class="notice">
          The code expired. <button onClick={get}>Show a new one</button>
        </p>
      )}
    </Section>
  );
}
