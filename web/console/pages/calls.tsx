/** Live calls: the list from GET /calls, kept current by the call events of /v1.0/ws. */
import { useEffect, useState } from 'preact/hooks';
import { api, type Call, type Page, type Address } from '../api';
import { useConsole } from '../context';
import { href } from '../router';
import { ErrorLine, Section, Table, seconds, shortTime, useLoad } from '../components/common';

export const addr = (a: Address | undefined) => (a ? (a.target_name ? `${a.target} (${a.target_name})` : a.target) : '');

/** How long a call talked (ended) or has been talking (live); '' before it is answered. */
export function duration(c: Call, now: number): string {
  if (!c.tm_progressing) return '';
  const start = Date.parse(c.tm_progressing);
  const end = c.tm_hangup ? Date.parse(c.tm_hangup) : now;
  return seconds(end - start);
}

export function useNow(periodMs = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), periodMs);
    return () => clearInterval(t);
  }, [periodMs]);
  return now;
}

export function CallsPage() {
  const { events, topic } = useConsole();
  const list = useLoad(() => api.get<Page<Call>>('/calls', { page_size: 100 }).then((p) => p.result));
  const [calls, setCalls] = useState<Call[]>([]);
  const [onlyLive, setOnlyLive] = useState(false);
  const now = useNow();

  useEffect(() => {
    if (list.data) setCalls((cur) => merge(list.data ?? [], cur));
  }, [list.data]);
  useEffect(
    () =>
      events.subscribe(topic('call'), (e) => {
        if (!e.event_type.startsWith('call_')) return;
        const c = e.data as unknown as Call;
        if (typeof c.id !== 'string') return;
        setCalls((cur) => (e.event_type === 'call_deleted' ? cur.filter((x) => x.id !== c.id) : upsert(cur, c)));
      }),
    [events],
  );

  const rows = onlyLive ? calls.filter((c) => c.status !== 'hangup') : calls;
  return (
    <Section
      title="Live calls"
      actions={
        <label class="inline">
          <input type="checkbox" checked={onlyLive} onChange={(e) => setOnlyLive(e.currentTarget.checked)} /> only calls in progress
        </label>
      }
    >
      <ErrorLine error={list.error} />
      <Table
        label="Calls"
        rows={rows}
        rowKey={(c) => c.id}
        rowClass={(c) => `status-${c.status}`}
        empty={list.loading ? 'Loading…' : 'No calls yet.'}
        columns={[
          {
            title: 'Status',
            cell: (c) => (
              <span class={`badge st-${c.status}`} data-field="status">
                {c.status}
              </span>
            ),
          },
          { title: 'Direction', cell: (c) => c.direction },
          { title: 'Source', cell: (c) => addr(c.source) },
          { title: 'Destination', cell: (c) => <a href={href('calls', c.id)}>{addr(c.destination) || c.id.slice(0, 8)}</a> },
          { title: 'Duration', cls: 'num', cell: (c) => <span data-field="duration">{duration(c, now)}</span> },
          {
            title: 'Node',
            cell: (c) => (
              <span data-field="node" title="The media node holding the call">
                {c.node_id || '—'}
              </span>
            ),
          },
          { title: 'Started', cell: (c) => shortTime(c.tm_create) },
        ]}
      />
    </Section>
  );
}

function upsert(cur: Call[], c: Call): Call[] {
  const i = cur.findIndex((x) => x.id === c.id);
  if (i < 0) return [c, ...cur];
  const copy = cur.slice();
  copy[i] = { ...cur[i]!, ...c };
  return copy;
}

/** The loaded list, with whatever the socket delivered meanwhile on top (events are newer). */
function merge(loaded: Call[], live: Call[]): Call[] {
  let out = loaded;
  for (const c of live.slice().reverse()) out = upsert(out, c);
  return out;
}
