/** A waveform drawn on a canvas from a playfile's peak envelope (0..1), with the played part shaded. */
import { useEffect, useRef } from 'preact/hooks';

export function Waveform(props: { peaks: number[]; progress: number; label: string; onSeek?: (fraction: number) => void }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const c = canvas.current;
    const g = c?.getContext('2d');
    if (!c || !g) return;
    const ratio = window.devicePixelRatio || 1;
    const w = (c.width = Math.max(1, Math.round(c.clientWidth * ratio)));
    const h = (c.height = Math.max(1, Math.round(c.clientHeight * ratio)));
    g.clearRect(0, 0, w, h);
    const n = props.peaks.length;
    if (n === 0) return;
    const bar = w / n;
    const styles = getComputedStyle(c);
    const played = styles.getPropertyValue('--wave-played').trim() || '#2563eb';
    const rest = styles.getPropertyValue('--wave').trim() || '#94a3b8';
    for (let i = 0; i < n; i++) {
      const v = Math.max(0.02, Math.min(1, props.peaks[i]!));
      const bh = v * (h - 2);
      g.fillStyle = (i + 0.5) / n <= props.progress ? played : rest;
      g.fillRect(i * bar + bar * 0.1, (h - bh) / 2, Math.max(1, bar * 0.8), bh);
    }
  }, [props.peaks, props.progress]);
  const seek = (ev: MouseEvent) => {
    const c = canvas.current;
    if (!c || !props.onSeek) return;
    const r = c.getBoundingClientRect();
    props.onSeek(Math.min(1, Math.max(0, (ev.clientX - r.left) / r.width)));
  };
  return <canvas class="waveform" ref={canvas} role="img" aria-label={props.label} onClick={seek} />;
}
