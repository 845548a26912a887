/**
 * The model's side of a speech-to-speech session (realtime.ts): the 'out' fork the model's audio is
 * injected into, opened on its first audio, dropped on barge-in (with what it still had queued) and
 * closed when the session ends. One owner for the fork's life: a fork that finishes opening after it
 * was dropped or closed is stopped at once and never handed out; it would otherwise stay on the call's
 * endpoint after the session, as one did before this owner existed.
 */
import type { MediaFork } from '../media-server/tap';

export class OutFork {
  private fork: MediaFork | null = null;
  private opening: Promise<MediaFork | null> | null = null;
  private closed = false;

  constructor(private readonly open: () => Promise<MediaFork>) {}

  /** The open fork, opened if there is none; null when it was dropped or closed while it opened. */
  get(): Promise<MediaFork | null> {
    if (this.fork) return Promise.resolve(this.fork);
    if (this.closed) return Promise.resolve(null);
    this.opening ??= this.start();
    return this.opening;
  }

  private start(): Promise<MediaFork | null> {
    const opening: Promise<MediaFork | null> = this.open().then(
      (f) => {
        if (this.closed || this.opening !== opening) {
          void f.stop().catch(() => undefined);
          return null;
        }
        this.opening = null;
        return (this.fork = f);
      },
      (err: unknown) => {
        if (this.opening === opening) this.opening = null; // the next audio tries again
        throw err;
      },
    );
    return opening;
  }

  /** Drops the fork and its queued audio; the next `get()` opens another. */
  drop(): void {
    const f = this.fork;
    this.fork = null;
    this.opening = null;
    void f?.stop().catch(() => undefined);
  }

  /** The session ended: dropped for good. */
  close(): void {
    this.closed = true;
    this.drop();
  }
}
