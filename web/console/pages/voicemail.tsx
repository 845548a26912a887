/**
 * Voicemail (`#/voicemail`, `#/voicemail/<box id>`): the customer's boxes with their new and old
 * counts; a box's messages, each drawn as a waveform and played in the page, marked read or unread
 * (folder Old or New), deleted; the box's greetings uploaded or removed (manager and up, as the REST
 * enforces). The messages follow the `voicemail_message_*` events.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, canManage, type Extension, type Page, type VoicemailBox, type VoicemailMessage } from '../api';
import { ErrorLine, Section, Table, seconds, shortTime, useAction, useLoad } from '../components/common';
import { MessagePlayer } from '../components/voicemail-player';
import { useConsole } from '../context';
import { href } from '../router';

export function VoicemailPage({ box }: { box?: string }) {
  return box ? <BoxView id={box} key={box} /> : <BoxList />;
}

function BoxList() {
  const { events, topic } = useConsole();
  const boxes = useLoad(() => api.all<VoicemailBox>('/voicemail_boxes'));
  const exts = useLoad(() => api.all<Extension>('/extensions'));
  const extOf = useMemo(() => new Map((exts.data ?? []).map((e) => [e.id, e.extension])), [exts.data]);
  useEffect(() => events.subscribe(topic('voicemail_message'), () => boxes.reload()), [events]);
  return (
    <Section
      title="Voicemail"
      actions={
        <button class="link" onClick={() => boxes.reload()}>
          Refresh
        </button>
      }
    >
      <ErrorLine error={boxes.error} />
      <Table
        label="Voicemail boxes"
        rows={boxes.data ?? []}
        rowKey={(b) => b.id}
        empty={boxes.loading ? 'Loading…' : 'No voicemail boxes yet.'}
        columns={[
          {
            title: 'Box',
            cell: (b) => (
              <a href={href('voicemail', b.id)} data-field="number">
                {b.number}
              </a>
            ),
          },
          { title: 'Name', cell: (b) => b.name },
          { title: 'Extension', cell: (b) => (b.extension_id ? (extOf.get(b.extension_id) ?? '…') : 'free-standing') },
          { title: 'New', cls: 'num', cell: (b) => <span data-field="new">{b.new_count}</span> },
          { title: 'Old', cls: 'num', cell: (b) => <span data-field="old">{b.old_count}</span> },
        ]}
      />
    </Section>
  );
}

const PAGE = 20;

function BoxView({ id }: { id: string }) {
  const { me, events, topic } = useConsole();
  const box = useLoad(() => api.get<VoicemailBox & { new_count: number; old_count: number }>(`/voicemail_boxes/${id}`), [id]);
  const messages = useLoad(() => api.get<Page<VoicemailMessage>>(`/voicemail_boxes/${id}/messages`, { page_size: PAGE }), [id]);
  const reload = () => (box.reload(), messages.reload());
  useEffect(() => events.subscribe(topic('voicemail_message'), (e) => e.data.box_id === id && reload()), [events, id]);
  const b = box.data;
  return (
    <>
      <p>
        <a href={href('voicemail')}>← All boxes</a>
      </p>
      <Section
        title={b ? `Box ${b.number}${b.name ? ` · ${b.name}` : ''}` : 'Voicemail box'}
        actions={
          <button class="link" onClick={reload}>
            Refresh
          </button>
        }
      >
        <ErrorLine error={box.error || messages.error} />
        {b && (
          <p class="muted" data-field="counts">
            {b.new_count} new, {b.old_count} old
          </p>
        )}
        {messages.data && messages.data.result.length === 0 && <p class="empty">No messages.</p>}
        <ul class="vm-messages" aria-label="Messages">
          {(messages.data?.result ?? []).map((m) => (
            <MessageItem key={m.id} m={m} onChanged={reload} />
          ))}
        </ul>
        {messages.data?.next_page_token && <p class="muted">The {PAGE} newest messages are shown.</p>}
      </Section>
      {b && canManage(me) && <Greetings box={b} onChanged={box.reload} />}
    </>
  );
}

function caller(m: VoicemailMessage): string {
  const who = m.caller_number || 'unknown caller';
  return m.caller_name ? `${m.caller_name} <${who}>` : who;
}

function MessageItem({ m, onChanged }: { m: VoicemailMessage; onChanged: () => void }) {
  const act = useAction();
  const [confirming, setConfirming] = useState(false);
  const move = (folder: 'new' | 'old') => act.run(() => api.put(`/voicemail_messages/${m.id}`, { folder }).then(onChanged));
  const remove = () => act.run(() => api.del(`/voicemail_messages/${m.id}`).then(onChanged));
  return (
    <li class={`vm-message vm-${m.folder}`} data-id={m.id}>
      <header class="vm-head">
        <strong data-field="caller">{caller(m)}</strong>
        <span data-field="time">{shortTime(m.tm_create)}</span>
        <span data-field="duration">{seconds(m.duration)}</span>
        <span class={`badge badge-${m.folder}`} data-field="folder">
          {m.folder === 'new' ? 'New' : 'Saved'}
        </span>
        {m.urgent && (
          <span class="badge badge-urgent" data-field="urgent">
            Urgent
          </span>
        )}
      </header>
      <MessagePlayer id={m.id} durationMs={m.duration} label={`Message from ${caller(m)}`} />
      {m.transcript && (
        <blockquote class="vm-transcript" data-field="transcript">
          {m.transcript}
        </blockquote>
      )}
      <div class="actions">
        {m.folder === 'new' ? (
          <button onClick={() => void move('old')} disabled={act.busy}>
            Mark read
          </button>
        ) : (
          <button onClick={() => void move('new')} disabled={act.busy}>
            Mark unread
          </button>
        )}
        {confirming ? (
          <>
            <button class="danger" onClick={() => void remove()} disabled={act.busy}>
              Delete for good
            </button>
            <button class="link" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </>
        ) : (
          <button onClick={() => setConfirming(true)}>Delete</button>
        )}
      </div>
      <ErrorLine error={act.error} />
    </li>
  );
}

const KINDS = [
  ['unavailable', 'Unavailable'],
  ['busy', 'Busy'],
  ['name', 'Name'],
] as const;

function Greetings({ box, onChanged }: { box: VoicemailBox; onChanged: () => void }) {
  const act = useAction();
  const [kind, setKind] = useState<(typeof KINDS)[number][0]>('unavailable');
  const [file, setFile] = useState<File | null>(null);
  const upload = (ev: Event) => {
    ev.preventDefault();
    if (!file) return;
    void act.run(() => api.upload(`PUT`, `/voicemail_boxes/${box.id}/greetings/${kind}`, file).then(onChanged));
  };
  return (
    <Section title="Greetings">
      <ul class="plain" aria-label="Greetings">
        {KINDS.map(([k, label]) => (
          <li data-kind={k}>
            {label}: <span data-field="greeting">{box[`greeting_${k}`] ? 'recorded' : 'spoken from text (default)'}</span>
            {box[`greeting_${k}`] && (
              <button class="link" disabled={act.busy} onClick={() => void act.run(() => api.del(`/voicemail_boxes/${box.id}/greetings/${k}`).then(onChanged))}>
                Remove
              </button>
            )}
          </li>
        ))}
      </ul>
      <form class="row-form" aria-label="Upload a greeting" onSubmit={upload}>
        <label>
          Greeting
          <select name="kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as typeof kind)}>
            {KINDS.map(([k, label]) => (
              <option value={k}>{label}</option>
            ))}
          </select>
        </label>
        <label>
          WAV file (0.5 to 120 s)
          <input name="file" type="file" accept="audio/wav,.wav" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        </label>
        <button type="submit" class="primary" disabled={act.busy || !file}>
          Upload
        </button>
      </form>
      <ErrorLine error={act.error} />
    </Section>
  );
}
