/**
 * One call: its state (live from /v1.0/ws), hang up / record / mute, its timeline, each leg's quality
 * (components/call-quality.tsx), the SIP ladder
 * (GET /timelines/calls/{id}/sip-analysis), its recordings and its transcripts.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type Call, type Page, type Recording, type TimelineEvent } from '../api';
import { useConsole } from '../context';
import { href } from '../router';
import { ErrorLine, type Loaded, Section, Table, shortTime, useAction, useLoad } from '../components/common';
import { SipLadder, type SipAnalysis } from '../components/sip-ladder';
import { CallQualitySection } from '../components/call-quality';
import { addr, duration, useNow } from './calls';

const EMPTY = '00000000-0000-0000-0000-000000000000';

interface Transcribe {
  id: string;
}
interface Transcript {
  id: string;
  direction: string;
  message: string;
  offset_ms: number;
}

export function CallPage({ id }: { id: string }) {
  const { events, topic } = useConsole();
  const call = useLoad(() => api.get<Call>(`/calls/${id}`), [id]);
  const timeline = useLoad(() => api.get<Page<TimelineEvent>>(`/timelines/calls/${id}/events`, { page_size: 200 }).then((p) => p.result.reverse()), [id]);
  const [samples, setSamples] = useState(0);

  useEffect(() => {
    const off = events.subscribe(topic('call', id), (e) => {
      if (!e.event_type.startsWith('call_')) return;
      // call_quality / call_quality_alarm carry a sample, not the call: the quality charts read again
      if (e.event_type === 'call_quality') setSamples((n) => n + 1);
      else if (!e.event_type.startsWith('call_quality')) call.set(e.data as unknown as Call);
      timeline.reload();
    });
    // a change between the first GET and the subscription taking effect sends no event we see: read again
    const again = [1000, 4000].map((ms) => window.setTimeout(() => call.reload(), ms));
    return () => {
      off();
      for (const t of again) window.clearTimeout(t);
    };
  }, [events, id]);

  const c = call.data;
  if (!c)
    return (
      <Section title="Call">
        <ErrorLine error={call.error} />
        {call.loading && <p>Loading…</p>}
      </Section>
    );
  return (
    <>
      <Section title={`Call ${addr(c.source)} → ${addr(c.destination)}`} actions={<a href={href('calls')}>All calls</a>}>
        <CallFacts c={c} />
        <CallControls id={id} c={c} call={call} />
      </Section>
      <Section title="Timeline">
        <ErrorLine error={timeline.error} />
        <ol class="timeline" aria-label="Call timeline">
          {(timeline.data ?? []).map((e) => (
            <li>
              <time>{shortTime(e.timestamp)}</time> <strong>{e.event_type}</strong> {describe(e)}
            </li>
          ))}
        </ol>
      </Section>
      <CallQualitySection call={c} samples={samples} />
      <Ladder id={id} ended={!live(c)} />
      <Recordings ids={c.recording_ids ?? []} />
      <Transcripts callId={id} />
    </>
  );
}

const live = (c: Call) => c.status !== 'hangup';

/** What the call is: status, direction, duration (ticking while live), who hung up, flow, node, id. */
function CallFacts({ c }: { c: Call }) {
  const now = useNow();
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <span class={`badge st-${c.status}`} data-field="status">
          {c.status}
        </span>
      </dd>
      <dt>Direction</dt>
      <dd>{c.direction}</dd>
      <dt>Duration</dt>
      <dd>{duration(c, now)}</dd>
      <dt>Started</dt>
      <dd>{shortTime(c.tm_create)}</dd>
      {!live(c) && (
        <>
          <dt>Hung up by</dt>
          <dd>
            {c.hangup_by} ({c.hangup_reason})
          </dd>
        </>
      )}
      <dt>Flow</dt>
      <dd>{c.flow_id && c.flow_id !== EMPTY ? <a href={href('flows', c.flow_id)}>{c.flow_id.slice(0, 8)}</a> : '—'}</dd>
      <dt>Node</dt>
      <dd data-field="node">{c.node_id || '—'}</dd>
      <dt>Id</dt>
      <dd>
        <code>{c.id}</code>
      </dd>
    </dl>
  );
}

/** Hang up, record and mute: each a request; the call's change comes back as call_updated. */
function CallControls({ id, c, call }: { id: string; c: Call; call: Loaded<Call> }) {
  const act = useAction();
  const answered = c.status === 'progressing';
  const recording = c.recording_id && c.recording_id !== EMPTY;
  const muted = isMuted(c);
  // Mute and recording changes come back as call_updated (media-app applies them a moment later).
  // hangup's later effect (hangup after terminating) comes as an event; read again too, in case it is missed
  const hangup = () =>
    act.run(() =>
      api.post<Call>(`/calls/${id}/hangup`).then((r) => {
        call.set({ ...c, ...r });
        for (const ms of [1000, 4000]) window.setTimeout(() => call.reload(), ms);
      }),
    );
  return (
    <>
      <div class="buttons">
        <button class="danger" disabled={!live(c) || act.busy} onClick={hangup}>
          Hang up
        </button>
        <button disabled={!answered || act.busy} onClick={() => act.run(() => (recording ? api.post<Call>(`/calls/${id}/recording_stop`) : api.post<Call>(`/calls/${id}/recording_start`, {})))}>
          {recording ? 'Stop recording' : 'Record'}
        </button>
        <button disabled={!answered || act.busy} onClick={() => act.run(() => (muted ? api.del<Call>(`/calls/${id}/mute`, {}) : api.post<Call>(`/calls/${id}/mute`, { direction: 'both' })))}>
          {muted ? 'Unmute' : 'Mute'}
        </button>
        {muted && (
          <span class="badge st-muted" data-field="mute">
            muted ({c.mute_direction})
          </span>
        )}
      </div>
      <ErrorLine error={act.error} />
    </>
  );
}

const isMuted = (c: Call) => c.mute_direction !== '' && c.mute_direction !== 'none';

function describe(e: TimelineEvent): string {
  const d = e.data ?? {};
  const bits = ['status', 'hangup_reason', 'type', 'direction'].map((k) => (typeof d[k] === 'string' && d[k] ? `${k}=${String(d[k])}` : '')).filter(Boolean);
  return bits.join(' ');
}

function Ladder({ id, ended }: { id: string; ended: boolean }) {
  const ladder = useLoad(
    () =>
      api.get<SipAnalysis>(`/timelines/calls/${id}/sip-analysis`).catch((e: unknown) => {
        if (e instanceof ApiError && e.reason === 'ROUTE_NOT_FOUND') return null;
        throw e;
      }),
    [id, ended],
  );
  return (
    <Section title="SIP ladder">
      <ErrorLine error={ladder.error} />
      {ladder.data === null && <p class="empty">This platform does not capture SIP messages yet.</p>}
      {ladder.data && <SipLadder analysis={ladder.data} />}
    </Section>
  );
}

function Recordings({ ids }: { ids: string[] }) {
  const recs = useLoad(() => Promise.all(ids.map((r) => api.get<Recording>(`/recordings/${r}`).catch(() => null))), [ids.join(',')]);
  const rows = (recs.data ?? []).filter((r): r is Recording => r !== null);
  return (
    <Section title="Recordings">
      <Table
        label="Recordings of the call"
        rows={rows}
        rowKey={(r) => r.id}
        empty="No recordings."
        columns={[
          { title: 'Recording', cell: (r) => <a href={href('recordings', r.id)}>{r.id.slice(0, 8)}</a> },
          { title: 'Status', cell: (r) => r.status },
          { title: 'Started', cell: (r) => shortTime(r.tm_start) },
        ]}
      />
    </Section>
  );
}

function Transcripts({ callId }: { callId: string }) {
  const list = useLoad(async () => {
    const sessions = await api.get<Page<Transcribe>>('/transcribes', { resource_id: callId });
    const all: Transcript[] = [];
    for (const s of sessions.result) all.push(...(await api.get<Page<Transcript>>('/transcripts', { transcribe_id: s.id, page_size: 100 })).result);
    return all.sort((a, b) => a.offset_ms - b.offset_ms);
  }, [callId]);
  return (
    <Section title="Transcripts">
      <ErrorLine error={list.error} />
      {(list.data ?? []).length === 0 ? (
        <p class="empty">No transcripts.</p>
      ) : (
        <ul class="transcript">
          {(list.data ?? []).map((t) => (
            <li class={`dir-${t.direction}`}>
              <span class="who">{t.direction === 'in' ? 'Caller' : 'Platform'}</span> {t.message}
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}
