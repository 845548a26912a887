/**
 * An eval call's two audio tracks (docs/evals.md "Both tracks of a call"): what the simulated caller sent
 * and what it heard of the agent, each an <audio> element on the track's URL from the result (served by
 * GET /eval_runs/{id}/audio/{file} with the session cookie), and "Play both" starting them together from
 * the same moment. Both start at the answer, as the timeline does: the time played is reported to the
 * timeline (`onTime`, ms after the answer) for its playhead. A call whose tracks were not kept says why.
 */
import { useRef } from 'preact/hooks';
import type { EvalCallResult } from '../api';

export function EvalCallAudio({ call, onTime }: { call: EvalCallResult; onTime: (ms: number | null) => void }) {
  const caller = useRef<HTMLAudioElement>(null);
  const agent = useRef<HTMLAudioElement>(null);
  const a = call.audio;
  if (!a) return call.audio_error ? <p class="error">{call.audio_error}</p> : <p class="muted">No audio kept (the call was not answered).</p>;
  const playBoth = () => {
    const [c, g] = [caller.current, agent.current];
    if (!c || !g) return;
    const from = Math.max(c.currentTime, g.currentTime);
    c.currentTime = from;
    g.currentTime = from;
    void c.play();
    void g.play();
  };
  const track = (which: 'caller' | 'agent', ref: typeof caller, url: string, label: string) => (
    <figure class="eval-track" data-track={which}>
      <figcaption>{label}</figcaption>
      <audio
        ref={ref}
        controls
        preload="metadata"
        src={url}
        data-track={which}
        onTimeUpdate={(e) => onTime(e.currentTarget.currentTime * 1000)}
        onSeeked={(e) => onTime(e.currentTarget.currentTime * 1000)}
      />
    </figure>
  );
  return (
    <div class="eval-audio" aria-label="Both audio tracks of the call">
      {track('caller', caller, a.caller_url, 'Caller: what it sent (its voice, background, digits)')}
      {track('agent', agent, a.agent_url, 'Agent: what the caller heard')}
      <p>
        <button type="button" data-action="play-both" onClick={playBoth}>
          Play both
        </button>{' '}
        <span class="muted">
          {(a.duration_ms / 1000).toFixed(1)} s each, from the answer
          {a.truncated && <span data-field="audio-note"> · {a.note ?? 'cut at the cap'}</span>}
        </span>
      </p>
    </div>
  );
}
