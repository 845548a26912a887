/**
 * Where a speech-to-speech turn's time went (docs/ai.md "Speech-to-speech"), the counterpart of
 * turn-latency.ts for realtime.ts: from the end of the caller's speech (or, for the greeting, the
 * agent being asked to speak) to the vendor ending the caller's turn, to the model's first audio
 * of its reply arriving, to that audio's first going out to the caller. There is no recogniser,
 * LLM or voice of the platform's in between, so those stages are not recorded. Written to the
 * reply's assistant aimessage (`metadata.latency`), published as aicall_turn and observed in
 * ai_turn_latency_ms, as a voice turn is.
 */
import { platformMetrics } from '../../core/metrics';
import type { LatencyJson } from './turn-latency';

/** What a reply answers: the caller's turn (its speech's end, the vendor's decision) or the agent asked to speak first. */
interface Opening {
  speechEndAt: number | null;
  decidedAt: number | null;
  askedAt: number;
}

interface Reply {
  opening: Opening;
  modelAt: number;
  /** when its first audio went out; null: it never did (cut, dropped, the session over) */
  playedAt: number | null;
  settled: boolean;
  settle: () => void;
  ready: Promise<void>;
}

export class RealtimeTurns {
  /** the opening the next reply's audio answers (taken by the first item whose audio comes after it) */
  private opening: Opening | null = null;
  private readonly replies = new Map<string, Reply>();
  /** the item whose audio came last: the reply a link's words belong to when it names none */
  private lastItem: string | null = null;

  /** The agent was asked to speak first (no caller speech before it). */
  asked(at = Date.now()): void {
    this.opening = { speechEndAt: null, decidedAt: null, askedAt: at };
  }

  /** The vendor ended the caller's turn now; the caller's speech ended at `speechEndAt`. */
  callerEnded(speechEndAt: number, at = Date.now()): void {
    this.opening = { speechEndAt: Math.min(speechEndAt, at), decidedAt: at, askedAt: at };
  }

  /** The vendor ended the caller's turn, its speech having ended at `speechEndAt`, without saying when it decided. */
  callerEndedUndecided(speechEndAt: number, at = Date.now()): void {
    this.opening = { speechEndAt: Math.min(speechEndAt, at), decidedAt: null, askedAt: at };
  }

  /** Model audio of `item` came: the first of an item after an opening starts its reply. */
  modelAudio(item: string, at = Date.now()): void {
    this.lastItem = item;
    if (this.replies.has(item) || !this.opening) return;
    let settle!: () => void;
    const ready = new Promise<void>((r) => (settle = r));
    this.replies.set(item, { opening: this.opening, modelAt: at, playedAt: null, settled: false, settle, ready });
    this.opening = null;
  }

  /** The item's first audio went out at `at`, or never will (null): the first word on it stands. */
  played(item: string, at: number | null): void {
    const r = this.replies.get(item);
    if (!r || r.settled) return;
    r.playedAt = at;
    r.settled = true;
    r.settle();
  }

  /** The session is over: no reply waits for audio any more. */
  close(): void {
    for (const item of this.replies.keys()) this.played(item, null);
  }

  /**
   * The latency of the reply whose words these are (`item`, else the one whose audio came last),
   * once its first audio went out or never will; a reply with words and no audio answers the
   * opening still waiting. Null: it answers no known opening (a link that reports no end of the
   * caller's turn), so there is nothing to measure from.
   */
  async latencyOf(item: string | undefined, interrupted: boolean): Promise<LatencyJson | null> {
    const key = item ?? this.lastItem;
    const r = key === null ? undefined : this.replies.get(key);
    if (!r) {
      const opening = this.opening;
      this.opening = null;
      return opening ? json(opening, null, null, interrupted) : null;
    }
    await r.ready;
    if (key) this.replies.delete(key);
    return json(r.opening, r.modelAt, r.playedAt, interrupted);
  }
}

function json(o: Opening, modelAt: number | null, playedAt: number | null, interrupted: boolean): LatencyJson {
  const from = o.speechEndAt ?? o.askedAt;
  const since = (at: number | null) => (at === null ? null : Math.max(0, Math.round(at - from)));
  const j: LatencyJson = {
    // null for the greeting, and where the vendor does not say when it decided
    end_of_turn_wait_ms: o.speechEndAt === null ? null : since(o.decidedAt),
    model_first_audio_ms: since(modelAt),
    first_rtp_ms: since(playedAt),
    interrupted,
  };
  for (const stage of ['end_of_turn_wait', 'first_rtp'] as const) {
    const v = j[`${stage}_ms`];
    if (typeof v === 'number') platformMetrics.aiTurnLatency.observe({ stage }, v);
  }
  return j;
}
