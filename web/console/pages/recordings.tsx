/** Recordings: the list; one recording's files played in the page over their waveform, and downloaded. */
import { useRef, useState } from 'preact/hooks';
import { api, type Page, type Playfile, type Recording } from '../api';
import { ErrorLine, Section, Table, seconds, shortTime, useLoad } from '../components/common';
import { Waveform } from '../components/waveform';
import { href } from '../router';

export function RecordingsPage({ focus }: { focus?: string }) {
  const list = useLoad(() => api.get<Page<Recording>>('/recordings', { page_size: 100 }).then((p) => p.result));
  return (
    <>
      {focus && <RecordingView id={focus} key={focus} />}
      <Section title="Recordings">
        <ErrorLine error={list.error} />
        <Table
          label="Recordings"
          rows={list.data ?? []}
          rowKey={(r) => r.id}
          empty={list.loading ? 'Loading…' : 'No recordings yet.'}
          columns={[
            { title: 'Recording', cell: (r) => <a href={href('recordings', r.id)}>{r.id.slice(0, 8)}</a> },
            {
              title: 'Of',
              cell: (r) => (r.reference_type === 'call' ? <a href={href('calls', r.reference_id)}>call {r.reference_id.slice(0, 8)}</a> : `${r.reference_type} ${r.reference_id.slice(0, 8)}`),
            },
            { title: 'Status', cell: (r) => r.status },
            { title: 'Started', cell: (r) => shortTime(r.tm_start) },
            { title: 'Ended', cell: (r) => shortTime(r.tm_end) },
          ]}
        />
      </Section>
    </>
  );
}

function RecordingView({ id }: { id: string }) {
  const files = useLoad(() => api.get<Playfile[]>(`/recordings/${id}/playfiles`), [id]);
  return (
    <Section title={`Recording ${id.slice(0, 8)}`}>
      <ErrorLine error={files.error} />
      {(files.data ?? []).map((f) => (
        <Player file={f} key={f.filename} />
      ))}
      {files.data?.length === 0 && <p class="empty">This recording has no files yet.</p>}
    </Section>
  );
}

function Player({ file }: { file: Playfile }) {
  const audio = useRef<HTMLAudioElement>(null);
  const [progress, setProgress] = useState(0);
  const label = file.direction === 'in' ? 'Caller side' : file.direction === 'out' ? 'Platform side' : 'Both sides';
  return (
    <div class="player" data-filename={file.filename}>
      <p>
        <strong>{label}</strong> · {seconds(file.duration * 1000)} · {Math.round(file.filesize / 1024)} kB
      </p>
      <Waveform peaks={file.peaks} progress={progress} label={`Waveform of ${file.filename}`} onSeek={(f) => audio.current && file.duration && (audio.current.currentTime = f * file.duration)} />
      <audio
        ref={audio}
        controls
        preload="metadata"
        src={file.uri_download}
        onTimeUpdate={(e) => setProgress(file.duration ? e.currentTarget.currentTime / file.duration : 0)}
        onEnded={() => setProgress(1)}
      />
      <a class="button" href={file.uri_download} download={file.filename}>
        Download
      </a>
    </div>
  );
}
