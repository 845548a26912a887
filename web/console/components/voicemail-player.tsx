/**
 * A voicemail message played in the page over its waveform. The WAV is fetched once through the API
 * (GET /voicemail_messages/{id}/media, the login cookie: never a public URL); the audio element plays
 * it from a blob: URL (the console's CSP allows blob: media) and WebAudio decodes the same bytes for
 * the peak envelope the waveform draws, so no peaks endpoint is needed.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText } from '../api';
import { ErrorLine } from './common';
import { Waveform } from './waveform';

/** Bars drawn per message. */
const BINS = 160;

/** The peak envelope of decoded audio: the loudest sample of each bin, scaled to the loudest bin. */
export function peaksOf(samples: Float32Array, bins = BINS): number[] {
  const n = Math.max(1, Math.min(bins, samples.length));
  const per = samples.length / n;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    let max = 0;
    const end = Math.min(samples.length, Math.round((i + 1) * per));
    for (let j = Math.round(i * per); j < end; j++) max = Math.max(max, Math.abs(samples[j]!));
    out.push(max);
  }
  const top = Math.max(...out);
  return top > 0 ? out.map((v) => v / top) : out;
}

export function MessagePlayer(props: { id: string; durationMs: number; label: string }) {
  const audio = useRef<HTMLAudioElement>(null);
  const [src, setSrc] = useState('');
  const [peaks, setPeaks] = useState<number[]>([]);
  const [progress, setProgress] = useState(0);
  const [error, setError] = useState('');
  useEffect(() => {
    let live = true;
    let url = '';
    api.bytes(`/voicemail_messages/${props.id}/media`).then(
      async (bytes) => {
        if (!live) return;
        url = URL.createObjectURL(new Blob([bytes], { type: 'audio/wav' }));
        setSrc(url);
        // decodeAudioData detaches its buffer: decode a copy; an OfflineAudioContext needs no audio device
        const decoded = await new OfflineAudioContext(1, 1, 8000).decodeAudioData(bytes.slice(0));
        if (live) setPeaks(peaksOf(decoded.getChannelData(0)));
      },
      (e: unknown) => live && setError(errorText(e)),
    );
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [props.id]);
  const duration = props.durationMs / 1000;
  return (
    <div class="player" data-ready={peaks.length > 0 ? 'true' : 'false'}>
      <Waveform peaks={peaks} progress={progress} label={`Waveform of ${props.label}`} onSeek={(f) => audio.current && duration && (audio.current.currentTime = f * duration)} />
      {src && (
        <audio
          ref={audio}
          controls
          preload="auto"
          src={src}
          aria-label={props.label}
          onTimeUpdate={(e) => setProgress(e.currentTarget.duration ? e.currentTarget.currentTime / e.currentTarget.duration : 0)}
          onEnded={() => setProgress(1)}
        />
      )}
      <ErrorLine error={error} />
    </div>
  );
}
