/**
 * Preemptive generation for the voice loop (docs/ai.md "Turn-taking"): when the caller pauses and
 * the words so far (finals and the latest interim) read as a finished sentence, the LLM is asked at
 * once (AiSession.prefetch) while the platform still waits for the end of the turn; when the turn
 * ends with the same words (compared lower-cased, without punctuation) the reply takes that answer,
 * otherwise it is aborted and the reply asks again. Nothing asked ahead is said or stored before the
 * turn ends with its words.
 */
import type { AiSession } from '../../core/ai/session';
import type { Prefetch } from '../../core/ai/prefetch';
import { endOfTurn, normaliseWords } from '../../core/ai/turns';
import { platformMetrics } from '../../core/metrics';

export class Preemption {
  private current: { key: string; pre: Prefetch } | null = null;

  constructor(
    private readonly session: AiSession,
    private readonly language: string,
  ) {}

  /** The caller paused after `text`: asks ahead if it is a finished sentence (and not already asked). */
  paused(text: string): void {
    const key = normaliseWords(text);
    if (!key || endOfTurn(text, this.language) !== 'complete' || this.current?.key === key) return;
    this.discard();
    const pre = this.session.prefetch(text);
    if (pre) this.current = { key, pre };
  }

  /**
   * The turn ended with `text`: the answer asked ahead for the same words (its text is the turn's:
   * the words the LLM was given), or null (what was asked ahead, if anything, is aborted).
   */
  take(text: string): Prefetch | null {
    const c = this.current;
    this.current = null;
    if (!c) return null;
    if (c.key === normaliseWords(text) && !c.pre.aborted) {
      platformMetrics.aiPreemptions.labels('committed').inc();
      return c.pre;
    }
    c.pre.abort();
    platformMetrics.aiPreemptions.labels('discarded').inc();
    return null;
  }

  /** Drops what was asked ahead (barge-in, the session's end). */
  discard(): void {
    if (!this.current) return;
    this.current.pre.abort();
    this.current = null;
    platformMetrics.aiPreemptions.labels('discarded').inc();
  }
}
