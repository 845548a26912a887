/**
 * An eval call's timeline: the transcript lines of both sides on one time axis (ms after the answer),
 * an agent line spanning what the caller heard of it (its `heard` segment) or until the next line, the
 * caller lines that started while the agent was speaking marked as talk-over; then the lines as a list
 * and the agent turns' latency stages. Drawn in SVG attributes (the CSP allows no inline style).
 * Under it both audio tracks of the call (eval-audio.tsx); the time played is a playhead on the axis.
 */
import { useState } from 'preact/hooks';
import type { EvalCallResult, EvalRun, EvalTranscriptLine } from '../api';
import { href } from '../router';
import { Section } from './common';
import { TurnsTable, ms } from './eval-format';
import { EvalCallAudio } from './eval-audio';

interface Span {
  line: EvalTranscriptLine;
  start: number;
  end: number;
  talkOver: boolean;
}

/** How long an agent line lasts when nothing measured it: about 60 ms a character, at least 800 ms. */
const guessMs = (text: string) => Math.max(800, text.length * 60);

/** Each line's span; a caller line that starts inside an agent line's span talks over it. */
export function spansOf(call: EvalCallResult): Span[] {
  const lines = call.transcript.slice().sort((a, b) => a.t_ms - b.t_ms);
  const heard = call.heard ?? [];
  const spans = lines.map((line, i) => {
    const start = line.role === 'agent' && typeof line.heard_t_ms === 'number' ? line.heard_t_ms : line.t_ms;
    const seg = line.role === 'agent' ? heard.find((h) => h.t_ms <= start + 50 && h.end_ms > start) : undefined;
    const nextOwn = lines.slice(i + 1).find((l) => l.role === line.role);
    const end = seg ? seg.end_ms : Math.min(start + guessMs(line.text), nextOwn ? nextOwn.t_ms : Infinity);
    return { line, start, end: Math.max(end, start + 200), talkOver: false };
  });
  for (const s of spans) {
    if (s.line.role !== 'caller') continue;
    s.talkOver = spans.some((a) => a.line.role === 'agent' && a.start < s.start && s.start < a.end);
  }
  return spans;
}

const W = 900;
const LANE = 34;

export function EvalTimeline(props: { run: EvalRun; call: EvalCallResult; index: number; name: string }) {
  const { call, run } = props;
  const spans = spansOf(call);
  const [played, setPlayed] = useState<number | null>(null);
  const total = Math.max(1000, call.audio?.duration_ms ?? 0, ...spans.map((s) => s.end));
  const x = (t: number) => 70 + (t / total) * (W - 80);
  const y = (role: string) => (role === 'caller' ? 20 : 20 + LANE + 8);
  const ticks = Array.from({ length: 6 }, (_, i) => Math.round((total * i) / 5));
  return (
    <>
      <Section title={`Call ${props.index + 1}: ${props.name}`} actions={<a href={href('evals', run.id)}>The run</a>}>
        <p class="muted">
          {call.passed ? 'passed' : 'failed'} · ended by {call.ended_by}
          {call.ai_version !== undefined && ` · version ${call.ai_version}`}
        </p>
        <svg class="eval-timeline" viewBox={`0 0 ${W} ${2 * LANE + 60}`} role="img" aria-label="Both sides of the call on a time axis">
          <text x="4" y={y('caller') + 21} class="lane-label">
            caller
          </text>
          <text x="4" y={y('agent') + 21} class="lane-label">
            agent
          </text>
          {spans.map((s) => (
            <g class={`span span-${s.line.role}${s.talkOver ? ' talk-over' : ''}`}>
              <title>{`${s.line.role} at ${Math.round(s.start)} ms: ${s.line.text}`}</title>
              <rect x={x(s.start)} y={y(s.line.role)} width={Math.max(2, x(s.end) - x(s.start))} height={LANE} rx="3" />
            </g>
          ))}
          {ticks.map((t, i) => (
            <text x={x(t)} y={2 * LANE + 50} class="tick" text-anchor={i === ticks.length - 1 ? 'end' : 'middle'}>
              {(t / 1000).toFixed(1)} s
            </text>
          ))}
          {played !== null && <line class="playhead" x1={x(played)} x2={x(played)} y1="14" y2={2 * LANE + 34} />}
        </svg>
        <EvalCallAudio call={call} onTime={setPlayed} />
        <ol class="eval-lines" aria-label="Transcript">
          {spans.map((s) => (
            <li class={`line-${s.line.role}${s.talkOver ? ' talk-over' : ''}`} data-role={s.line.role}>
              <span class="t">{ms(s.line.t_ms)}</span> <strong>{s.line.role}</strong>
              {s.talkOver && <span class="badge ev-talk-over">talks over the agent</span>} <span class="text">{s.line.text}</span>
              {s.line.heard_text !== undefined && <span class="heard"> (heard: {s.line.heard_text || '—'})</span>}
            </li>
          ))}
        </ol>
      </Section>
      <Section title="Turns">
        <TurnsTable turns={call.turns} />
      </Section>
    </>
  );
}
