/**
 * A reply asked for before the caller's turn is known to be over (preemptive generation, docs/ai.md
 * "Turn-taking"): the LLM's first round for the words so far, streamed into a buffer. Nothing of it
 * is recorded or said until a reply takes it (AiSession.reply with `prefetched`), and a reply takes
 * it only if the messages it would send now are exactly the ones this request sent; otherwise, or
 * when the words changed, it is aborted (the HTTP request closed) and the reply asks again.
 */
import type { ChatChunk, ChatMessage } from '../llm/client';

export class Prefetch {
  private readonly chunks: ChatChunk[] = [];
  private done = false;
  private error: Error | null = null;
  private wake: (() => void) | null = null;
  private readonly ctl = new AbortController();
  /** the messages sent, as JSON: what a reply must send to take this one */
  readonly sent: string;

  constructor(
    /** the caller's words it answers */
    readonly text: string,
    messages: ChatMessage[],
    ask: (messages: ChatMessage[], signal: AbortSignal) => AsyncGenerator<ChatChunk>,
  ) {
    this.sent = JSON.stringify(messages);
    void this.pump(ask(messages, this.ctl.signal));
  }

  private async pump(source: AsyncGenerator<ChatChunk>): Promise<void> {
    try {
      for await (const c of source) {
        this.chunks.push(c);
        this.wake?.();
      }
    } catch (e) {
      this.error = e instanceof Error ? e : new Error(String(e));
    } finally {
      this.done = true;
      this.wake?.();
    }
  }

  /** Drops it: the request is aborted (if it is still streaming) and nothing of it is used. */
  abort(): void {
    this.ctl.abort();
  }

  get aborted(): boolean {
    return this.ctl.signal.aborted;
  }

  /** The request failed (an error status, the network): a reply asks again rather than take it. */
  get failed(): boolean {
    return this.error !== null;
  }

  /**
   * What came so far, then the rest as it comes; `signal` aborting aborts the request and stops the
   * replay with the signal's reason, as the LLM client's own stream stops (also when it was aborted before).
   */
  async *replay(signal?: AbortSignal): AsyncGenerator<ChatChunk> {
    const onAbort = () => this.abort();
    const stopIfAborted = () => {
      if (!signal?.aborted) return;
      this.abort();
      throw signal.reason instanceof Error ? signal.reason : new DOMException('The reply was aborted', 'AbortError');
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (let i = 0; ;) {
        stopIfAborted();
        if (i < this.chunks.length) {
          yield this.chunks[i++]!;
          continue;
        }
        if (this.error) throw this.error;
        if (this.done) return;
        await new Promise<void>((r) => (this.wake = r));
        this.wake = null;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }
}
