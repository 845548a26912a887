/**
 * Where one voice turn's time went (docs/ai.md "Turn-taking"): from the end of the caller's speech
 * to the end-of-turn decision, to the recogniser's last final, the LLM's first token, the voice's
 * first audio and the first reply audio out. Written to the turn's assistant aimessages
 * (`metadata.latency`), published as aicall_turn, and observed in ai_turn_latency_ms.
 */
import { platformMetrics } from '../../core/metrics';

export interface TurnTimes {
  /** when the caller's speech ended (Date.now()); null for the agent's opening line */
  speechEndAt: number | null;
  /** when the recogniser's last final of the turn came */
  finalAt: number | null;
  /** when the turn was judged finished */
  decidedAt: number | null;
  /** why: a finished sentence ('complete') or a trailing word ('continuation') */
  rule: 'complete' | 'continuation' | null;
  /** the answer was asked for before the turn ended (preemptive generation) and taken */
  preempted?: boolean;
}

export type LatencyJson = Record<string, number | string | boolean | null>;

export class TurnLatency {
  /** the assistant aimessages of the reply */
  readonly messageIds: string[] = [];
  private readonly askedAt = Date.now();
  private llmFirstAt = 0;
  private ttsFirstByteMs: number | null = null;
  private firstAudioAt = 0;
  private resolveFirst!: () => void;
  /** resolves once the reply's first audio went out */
  readonly firstAudio = new Promise<void>((r) => (this.resolveFirst = r));

  constructor(private readonly t: TurnTimes) {}

  llmToken(): void {
    if (!this.llmFirstAt) this.llmFirstAt = Date.now();
  }

  /** The first sentence's audio: `ttsMs` from handing it to the voice to its first audio, `at` when that went out. */
  audio(ttsMs: number, at: number): void {
    if (this.firstAudioAt || at <= 0) return;
    this.ttsFirstByteMs = Math.max(0, ttsMs);
    this.firstAudioAt = at;
    this.resolveFirst();
  }

  /** json() was taken (the turn was recorded) */
  recorded = false;

  json(interrupted: boolean): LatencyJson {
    this.recorded = true;
    const from = (a: number | null, b: number | null) => (a && b ? Math.max(0, Math.round(b - a)) : null);
    const t = this.t;
    return {
      end_of_turn_rule: t.rule,
      end_of_turn_wait_ms: from(t.speechEndAt, t.decidedAt),
      stt_final_ms: from(t.speechEndAt, t.finalAt),
      llm_first_token_ms: from(this.askedAt, this.llmFirstAt || null),
      tts_first_byte_ms: this.ttsFirstByteMs,
      first_rtp_ms: from(t.speechEndAt ?? this.askedAt, this.firstAudioAt || null),
      interrupted,
      preempted: t.preempted ?? false,
    };
  }

  /**
   * Once `ready` (the first audio went out, or the reply ended without): the latency onto the
   * reply's assistant messages (`store`) and, the first time, into the metrics. Null without messages.
   */
  async record(ready: Promise<unknown>, cut: AbortSignal, store: (ids: string[], j: LatencyJson) => Promise<void>): Promise<LatencyJson | null> {
    await ready.catch(() => undefined);
    if (!this.messageIds.length) return null;
    const again = this.recorded;
    const j = this.json(cut.aborted);
    if (!again) this.observe(j);
    await store(this.messageIds, j);
    return j;
  }

  /** One observation per known stage. */
  observe(j: LatencyJson): void {
    const stages: [string, unknown][] = [
      ['end_of_turn_wait', j.end_of_turn_wait_ms],
      ['stt_final', j.stt_final_ms],
      ['llm_first_token', j.llm_first_token_ms],
      ['tts_first_byte', j.tts_first_byte_ms],
      ['first_rtp', j.first_rtp_ms],
    ];
    for (const [stage, v] of stages) if (typeof v === 'number') platformMetrics.aiTurnLatency.observe({ stage }, v);
  }
}
