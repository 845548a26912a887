// Waits on what a test party receives: each wait is a condition checked as each packet (frame, message)
// arrives, instead of a fixed sleep and a look afterwards. The conference party (conference/party.ts) and
// the streams peer (streams/support.ts) own one each and call check() at every arrival.

interface Wait {
  check: () => void;
  fail: (err: Error) => void;
}

export class ArrivalWaits {
  private readonly waits = new Set<Wait>();

  /**
   * Resolves once `test` holds (checked at once and at each check()); rejects naming `what` when it has
   * not held within `timeoutMs`, or at failAll(). The timer is the wait's own: cleared when it settles.
   */
  until(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
    try {
      if (test()) return Promise.resolve();
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    return new Promise<void>((resolve, reject) => {
      const w: Wait = {
        check: () => {
          if (!test()) return;
          done();
          resolve();
        },
        fail: (err: Error) => {
          done();
          reject(err);
        },
      };
      const timer = setTimeout(() => w.fail(new Error(`${what}: not within ${timeoutMs} ms`)), timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waits.delete(w);
      };
      this.waits.add(w);
    });
  }

  /**
   * Something arrived: every pending wait looks again. A test that throws (e.g. on a short frame) fails
   * its own wait with that error: never raised into the receiver's socket handler, an uncaught exception.
   */
  check(): void {
    for (const w of [...this.waits]) {
      try {
        w.check();
      } catch (e) {
        w.fail(e instanceof Error ? e : new Error(String(e)));
      }
    }
  }

  /** The receiver closes: every pending wait rejects with `err`. */
  failAll(err: Error): void {
    for (const w of [...this.waits]) w.fail(err);
  }
}
