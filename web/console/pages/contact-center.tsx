/**
 * Agents, queues and campaigns: who is available, who waits in which queue, how far each campaign
 * got. Live: agent, queuecall and campaigncall events refresh the lists. Below them the shell shows
 * the agent's browser phone (components/agent-phone.tsx), started on the first visit of this page and
 * kept across pages (shown elsewhere only while a call is up).
 */
import { useEffect } from 'preact/hooks';
import { api, type Agent } from '../api';
import { useConsole } from '../context';
import { ErrorLine, Section, Table, seconds, useLoad } from '../components/common';

interface Queue {
  id: string;
  name: string;
  routing_method: string;
  wait_queuecall_ids: string[];
  service_queuecall_ids: string[];
  total_incoming_count: number;
  total_serviced_count: number;
  total_abandoned_count: number;
}
interface Queuecall {
  id: string;
  queue_id: string;
  status: string;
  reference_id: string;
  duration_waiting: number;
  tm_create: string;
}
interface Campaign {
  id: string;
  name: string;
  status: string;
  service_level: number;
  dial_rate: number;
}
interface Campaigncall {
  id: string;
  status: string;
  result?: string;
}

/** Reload `reload` whenever an event of one of these resources arrives (coalesced to one per 300 ms). */
function useLiveReload(resources: string[], reload: () => void): void {
  const { events, topic } = useConsole();
  useEffect(() => {
    let t: number | undefined;
    const kick = () => {
      clearTimeout(t);
      t = window.setTimeout(reload, 300);
    };
    const offs = resources.map((r) => events.subscribe(topic(r), kick));
    return () => (clearTimeout(t), offs.forEach((o) => o()));
  }, [events, resources.join(',')]);
}

export function ContactCenterPage() {
  const agents = useLoad(() => api.all<Agent>('/agents'));
  const queues = useLoad(() => api.all<Queue>('/queues'));
  const waiting = useLoad(() => api.all<Queuecall>('/queuecalls'));
  const campaigns = useLoad(async () => {
    const list = await api.all<Campaign>('/campaigns');
    return Promise.all(list.map(async (c) => ({ c, calls: await api.all<Campaigncall>(`/campaigns/${c.id}/campaigncalls`).catch(() => []) })));
  });
  useLiveReload(['agent'], agents.reload);
  useLiveReload(['queue', 'queuecall'], () => (queues.reload(), waiting.reload()));
  useLiveReload(['campaign', 'campaigncall'], campaigns.reload);
  const queueName = (id: string) => (queues.data ?? []).find((q) => q.id === id)?.name ?? id.slice(0, 8);
  const live = (waiting.data ?? []).filter((q) => q.status === 'waiting' || q.status === 'service' || q.status === 'initiating');

  return (
    <>
      <Section title="Agents">
        <ErrorLine error={agents.error} />
        <Table
          label="Agents"
          rows={agents.data ?? []}
          rowKey={(a) => a.id}
          columns={[
            { title: 'Agent', cell: (a) => a.name || a.username },
            { title: 'Status', cell: (a) => <span class={`badge ag-${a.status || 'offline'}`}>{a.status || 'offline'}</span> },
            { title: 'Username', cell: (a) => a.username },
          ]}
        />
      </Section>
      <Section title="Queues">
        <ErrorLine error={queues.error} />
        <Table
          label="Queues"
          rows={queues.data ?? []}
          rowKey={(q) => q.id}
          empty="No queues."
          columns={[
            { title: 'Queue', cell: (q) => q.name || q.id.slice(0, 8) },
            { title: 'Waiting', cls: 'num', cell: (q) => q.wait_queuecall_ids.length },
            { title: 'In service', cls: 'num', cell: (q) => q.service_queuecall_ids.length },
            { title: 'Served / abandoned / total', cell: (q) => `${q.total_serviced_count} / ${q.total_abandoned_count} / ${q.total_incoming_count}` },
          ]}
        />
        <h3>Who waits</h3>
        <Table
          label="Callers in queues"
          rows={live}
          rowKey={(q) => q.id}
          empty="Nobody is waiting."
          columns={[
            { title: 'Queue', cell: (q) => queueName(q.queue_id) },
            { title: 'Status', cell: (q) => q.status },
            { title: 'Waiting for', cls: 'num', cell: (q) => seconds(q.duration_waiting || Date.now() - Date.parse(q.tm_create.replace(' ', 'T') + 'Z')) },
          ]}
        />
      </Section>
      <Section title="Campaigns">
        <ErrorLine error={campaigns.error} />
        <Table
          label="Campaigns"
          rows={campaigns.data ?? []}
          rowKey={(x) => x.c.id}
          empty="No campaigns."
          columns={[
            { title: 'Campaign', cell: (x) => x.c.name || x.c.id.slice(0, 8) },
            { title: 'Status', cell: (x) => x.c.status },
            { title: 'Progress', cell: (x) => <Progress calls={x.calls} /> },
          ]}
        />
      </Section>
    </>
  );
}

function Progress({ calls }: { calls: Campaigncall[] }) {
  const by = new Map<string, number>();
  for (const c of calls) by.set(c.status, (by.get(c.status) ?? 0) + 1);
  const done = by.get('done') ?? 0;
  return (
    <span>
      <progress max={Math.max(1, calls.length)} value={done} /> {[...by].map(([k, v]) => `${k} ${v}`).join(', ') || 'no calls yet'}
    </span>
  );
}
