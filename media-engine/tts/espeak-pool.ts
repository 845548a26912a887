/**
 * Warm espeak-ng processes. Starting espeak-ng (exec, loading its phoneme tables and voice) is most
 * of the time to its first audio, ~10 ms on an idle machine and far more under load; a process
 * started ahead of time has done that and only waits for its text on stdin. The pool keeps one
 * started process per set of options (voice, speed, ssml) and starts the next as soon as one is
 * taken, so each text is still its own process (its audio ends when the process does) but none
 * waits for a start-up. Spares nobody took for a while are ended.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { espeakArgs, speakOn, spawnEspeak, type EspeakStreamOptions } from './espeak-stream';
import { TtsError } from './provider';

interface Spare {
  child: ChildProcessWithoutNullStreams;
  dead: boolean;
  idle: NodeJS.Timeout;
}

export interface EspeakPoolOptions {
  /** a spare unused this long is ended (default 5 min) */
  idleMs?: number;
  /** most option sets kept warm at once; the least recently used goes first (default 8) */
  maxKeys?: number;
}

export interface EspeakPoolStats {
  /** texts given to a process that had already started */
  warm: number;
  /** texts that had to start their process */
  cold: number;
}

export class EspeakPool {
  private readonly spares = new Map<string, Spare>();
  private closed = false;
  readonly stats: EspeakPoolStats = { warm: 0, cold: 0 };

  constructor(private readonly opts: EspeakPoolOptions = {}) {}

  private static key(o: EspeakStreamOptions): string {
    return espeakArgs(o).join('\0');
  }

  /** Starts a spare for these options (a session opening knows its voice before its first say). */
  prewarm(o: EspeakStreamOptions): void {
    if (this.closed) return;
    const key = EspeakPool.key(o);
    if (this.spares.has(key)) {
      // most recently used last
      const s = this.spares.get(key)!;
      this.spares.delete(key);
      this.spares.set(key, s);
      return;
    }
    const child = spawnEspeak(o);
    const spare: Spare = { child, dead: false, idle: setTimeout(() => this.drop(key, spare), this.opts.idleMs ?? 300_000) };
    spare.idle.unref();
    const died = () => {
      spare.dead = true;
      if (this.spares.get(key) === spare) this.spares.delete(key);
    };
    child.on('error', died);
    child.on('exit', died);
    // a waiting spare must not keep the process alive (it ends by itself when our end of stdin closes)
    setRef(child, false);
    this.spares.set(key, spare);
    while (this.spares.size > (this.opts.maxKeys ?? 8)) {
      const [oldest, s] = this.spares.entries().next().value as [string, Spare];
      this.drop(oldest, s);
    }
  }

  private drop(key: string, spare: Spare): void {
    clearTimeout(spare.idle);
    if (this.spares.get(key) === spare) this.spares.delete(key);
    if (!spare.dead) spare.child.kill('SIGKILL');
  }

  /** A started process for these options: the spare if one is ready, else a new one. */
  private take(o: EspeakStreamOptions): ChildProcessWithoutNullStreams {
    const key = EspeakPool.key(o);
    const spare = this.spares.get(key);
    if (spare) {
      this.spares.delete(key);
      clearTimeout(spare.idle);
      if (!spare.dead && spare.child.pid !== undefined) {
        this.stats.warm++;
        setRef(spare.child, true);
        return spare.child;
      }
    }
    this.stats.cold++;
    return spawnEspeak(o);
  }

  /**
   * espeakStream's contract, on a warm process; the next one starts once this one has its text.
   * `signal`: stops the synthesis (the process is killed; the promise rejects).
   */
  speak(text: string, o: EspeakStreamOptions, onAudio: (samples: Int16Array) => void, signal?: AbortSignal): Promise<number> {
    if (!text.trim()) return Promise.reject(new TtsError('EMPTY_TEXT', 'nothing to say'));
    const child = this.take(o);
    const done = speakOn(child, text, o.timeoutMs ?? 20_000, onAudio, signal);
    // the replacement starts once this text is synthesized (or stopped), so it does not compete with it for the CPU
    const next = () => this.prewarm(o);
    void done.then(next, next);
    return done;
  }

  /** Ends every spare. */
  close(): void {
    this.closed = true;
    for (const [key, s] of [...this.spares]) this.drop(key, s);
  }
}

function setRef(child: ChildProcessWithoutNullStreams, on: boolean): void {
  for (const h of [child, child.stdin, child.stdout, child.stderr] as Array<{ ref?: () => void; unref?: () => void }>) {
    if (on) h.ref?.();
    else h.unref?.();
  }
}

/** The process-wide pool speakings use. */
export const espeakPool = new EspeakPool();
