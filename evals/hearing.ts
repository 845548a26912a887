/**
 * The simulated caller's ear: what it heard of the agent (every packet's samples, µ-law decoded, timed
 * from the answer) transcribed by one of the platform's recognisers (media-engine/stt: pocketsphinx,
 * with the scenario's phrases as a grammar, or a cloud one with the platform's key through its egress
 * policy). A stretch of the heard audio is cut to its voiced packets and given to a fresh recogniser
 * stream, which is ended and read whole: `transcribe` (a goal caller's turn, as soon as the agent fell
 * silent) and `finish` (after the call: the rest, utterance by utterance). The segments are the call's
 * `heard`; the agent lines get the text of the segments each reply covered (attachHeard).
 */
import type { EvalHear, EvalHeardSegment, EvalTranscriptLine } from '../core/evals/schema';
import { createSttProvider, type SttStream } from '../media-engine/stt';
import { UTTERANCE_GAP_MS, VOICED_LEVEL } from './checks/heard';
import type { HeardAudio, RtpPhone } from './rtp-phone';

interface Packet {
  t_ms: number;
  pcm: Int16Array;
  voiced: boolean;
}

const FRAME = 160;

export class Hearing {
  private readonly audio: Packet[] = [];
  readonly segments: EvalHeardSegment[] = [];

  constructor(
    private readonly spec: EvalHear,
    private readonly language: string,
  ) {}

  /** Keeps every packet `phone` hears from now on, timed from `t0` (performance.now() of the answer); returns the detach. */
  attach(phone: RtpPhone, t0: number): () => void {
    return phone.onHeard((p: HeardAudio) => {
      let sum = 0;
      for (const s of p.pcm) sum += Math.abs(s);
      this.audio.push({ t_ms: p.at - t0, pcm: p.pcm, voiced: p.pcm.length > 0 && sum / p.pcm.length > VOICED_LEVEL });
    });
  }

  /** The voiced stretch heard in [from, to) transcribed (one segment, kept), or null when the agent was not heard then. */
  async transcribe(from: number, to: number, signal?: AbortSignal): Promise<EvalHeardSegment | null> {
    const inRange = this.audio.filter((p) => p.t_ms >= from && p.t_ms < to);
    const first = inRange.findIndex((p) => p.voiced);
    if (first < 0) return null;
    let last = inRange.length - 1;
    while (!inRange[last]!.voiced) last--;
    const packets = inRange.slice(first, last + 1);
    const segment = { t_ms: Math.round(packets[0]!.t_ms), end_ms: Math.round(packets.at(-1)!.t_ms), text: await this.recognise(packets, signal) };
    this.segments.push(segment);
    this.segments.sort((a, b) => a.t_ms - b.t_ms);
    return segment;
  }

  /** After the call: the audio after the last segment, cut into utterances (UTTERANCE_GAP_MS of silence), each transcribed. */
  async finish(signal?: AbortSignal): Promise<EvalHeardSegment[]> {
    const after = this.segments.reduce((m, s) => Math.max(m, s.end_ms + 1), -Infinity);
    const voiced = this.audio.filter((p) => p.voiced && p.t_ms >= after);
    const spans: [number, number][] = [];
    for (const p of voiced) {
      const cur = spans.at(-1);
      if (cur && p.t_ms - cur[1] < UTTERANCE_GAP_MS) cur[1] = p.t_ms;
      else spans.push([p.t_ms, p.t_ms]);
    }
    for (const [from, to] of spans) {
      if (signal?.aborted) break;
      await this.transcribe(from, to + 1, signal);
    }
    return this.segments;
  }

  /** One recogniser stream for the packets (each written as its 160-sample frames), ended and read whole. */
  private async recognise(packets: Packet[], signal?: AbortSignal): Promise<string> {
    let stream: SttStream;
    try {
      stream = createSttProvider(this.spec.provider).createStream({ language: this.language, ...(this.spec.phrases ? { phrases: this.spec.phrases } : {}) });
    } catch (e) {
      throw new Error(`the caller's recogniser (${this.spec.provider}) failed: ${(e as Error).message}`);
    }
    const texts: string[] = [];
    let failed: Error | null = null;
    stream.on('transcript', (e) => {
      if (e.final && e.text.trim()) texts.push(e.text.trim());
    });
    stream.on('error', (e) => (failed ??= e));
    const abort = () => stream.abort();
    signal?.addEventListener('abort', abort, { once: true });
    try {
      for (const p of packets) for (let i = 0; i < p.pcm.length; i += FRAME) stream.write(p.pcm.subarray(i, i + FRAME));
      await stream.end();
    } finally {
      signal?.removeEventListener('abort', abort);
    }
    if (failed) throw new Error(`the caller's recogniser (${this.spec.provider}) failed: ${(failed as Error).message}`);
    return texts.join(' ');
  }
}

/** A segment's line may have been recorded this long after the caller heard the segment's last packet. */
const RECORD_SLACK_MS = 500;

/**
 * The agent lines with what the caller heard of them: each segment goes to the last agent line
 * recorded before the segment's end (+ RECORD_SLACK_MS): ai_talk records a reply as it starts to play
 * it, or once said or cut, so in both cases no later than the caller heard its last packet, while the
 * next reply starts after a silence of UTTERANCE_GAP_MS at least (else it would be the same segment).
 * A line gets its segments' text joined, and when the first began; segments before any line stay only
 * in `heard`.
 */
export function attachHeard(transcript: EvalTranscriptLine[], segments: EvalHeardSegment[]): EvalTranscriptLine[] {
  const agent = transcript.filter((l) => l.role === 'agent');
  const byLine = new Map<EvalTranscriptLine, EvalHeardSegment[]>();
  for (const s of segments) {
    const line = agent.findLast((l) => l.t_ms <= s.end_ms + RECORD_SLACK_MS);
    if (line) byLine.set(line, [...(byLine.get(line) ?? []), s]);
  }
  return transcript.map((l) => {
    if (l.role !== 'agent') return l;
    const mine = byLine.get(l) ?? [];
    return {
      ...l,
      heard_text: mine
        .map((s) => s.text)
        .filter(Boolean)
        .join(' '),
      ...(mine.length ? { heard_t_ms: mine[0]!.t_ms } : {}),
    };
  });
}
