/**
 * What a leg listens for in the caller's audio, inside the worker tick: answering machine detection
 * (app_amd timing over a VAD), the voicemail beep, and the VAD tap (turns of speech, for barge-in
 * and turn taking). Each runs on every inbound frame (silence when no packet came, so the timers
 * keep counting); nothing goes to the API thread per frame: AMD and beep settle one promise, the
 * tap reports only where a turn of speech starts and stops.
 */
import { AnsweringMachineDetector, type AmdParams, type AmdStatus } from '../dsp/amd';
import { BeepDetector, type BeepDetectorOptions } from '../dsp/beep-detector';
import { SpeechTurns, type SpeechTurnOptions } from '../dsp/speech-turns';
import { createVad, type Vad } from '../dsp/vad';

export interface AmdRequest extends Partial<AmdParams> {
  /** status for INITIALSILENCE (default NOTSURE; app_amd says MACHINE) */
  initialSilenceStatus?: AmdStatus;
  /** VAD on top of the energy threshold (default true; 'energy' uses the fallback VAD) */
  vad?: boolean | 'energy';
}

export interface AmdResult {
  result: AmdStatus;
  cause: string;
  /** when the verdict fell, ms after amd() started */
  offsetMs: number;
}

export interface BeepResult {
  /** start of the tone, ms after waitForBeep() started */
  offsetMs: number;
  frequency: number;
  durationMs: number;
}

export interface VadTapOptions extends SpeechTurnOptions {
  /** WebRTC VAD aggressiveness (default 2) */
  mode?: 0 | 1 | 2 | 3;
}

/** The VAD tap's report: the caller started or stopped speaking, ms after vadStart(). */
export interface SpeechEvent {
  state: 'start' | 'stop';
  offsetMs: number;
}

export class AnalysisError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

interface Pending<T> {
  resolve: (v: T) => void;
  reject: (e: Error) => void;
}

const FRAME_MS = 20;

export class LegAnalysis {
  private amd: { det: AnsweringMachineDetector; vad: Vad | null; p: Pending<AmdResult> } | null = null;
  private beep: { det: BeepDetector; p: Pending<BeepResult>; elapsedMs: number; timeoutMs: number } | null = null;
  private tap: { vad: Vad; turns: SpeechTurns; options: VadTapOptions; elapsedMs: number } | null = null;
  /** a tap being set up (VAD load): a second start or a stop in the meantime sees it */
  private tapLoading = false;
  /** stopVad() calls so far: a tap whose VAD loaded after one does not start */
  private tapStops = 0;
  private closed = false;
  /**
   * The cancels (and closes) so far, with the last one's reason and code: an AMD whose VAD loaded after
   * one of them ends with it instead of starting (nothing would end it: no frames come to a closed leg
   * or a dropped fork).
   */
  private ends = { count: 0, reason: '', code: '' };

  constructor(private readonly onSpeech: (e: SpeechEvent) => void = () => undefined) {}

  get active(): boolean {
    return this.amd !== null || this.beep !== null || this.tap !== null;
  }

  /** Starts the VAD tap: 'speech' events where the caller's turns of speech start and stop. */
  async startVad(o: VadTapOptions = {}): Promise<void> {
    if (this.tap || this.tapLoading) throw new AnalysisError('the VAD tap is already running on this endpoint', 'EBUSY');
    const turns = new SpeechTurns(o);
    this.tapLoading = true;
    const stops = this.tapStops;
    let vad: Vad;
    try {
      vad = await createVad({ mode: o.mode ?? 2 });
    } finally {
      this.tapLoading = false;
    }
    if (this.closed || this.tapStops !== stops) return vad.close();
    this.tap = { vad, turns, options: o, elapsedMs: 0 };
  }

  /** Whether the VAD tap runs. */
  get tapping(): boolean {
    return this.tap !== null;
  }

  /** The audio broke off (a dropped fork): a turn in progress ends with its 'stop'; the tap goes on, its turns counted afresh. */
  breakTurn(): void {
    const t = this.tap;
    if (!t) return;
    const inTurn = t.turns.inTurn;
    t.turns = new SpeechTurns(t.options);
    if (inTurn) this.onSpeech({ state: 'stop', offsetMs: t.elapsedMs });
  }

  /** Stops the VAD tap (a turn in progress ends with a 'stop'; one still loading its VAD does not start). */
  stopVad(): void {
    this.tapStops++;
    const t = this.tap;
    this.tap = null;
    if (!t) return;
    t.vad.close();
    if (t.turns.inTurn) this.onSpeech({ state: 'stop', offsetMs: t.elapsedMs });
  }

  async startAmd(req: AmdRequest): Promise<AmdResult> {
    if (this.amd) throw new AnalysisError('AMD is already running on this endpoint', 'EBUSY');
    const { vad: useVad = true, initialSilenceStatus, ...params } = req;
    // validate before the (async) VAD load so bad parameters fail fast
    new AnsweringMachineDetector({ ...params, initialSilenceStatus });
    const ends = this.ends.count;
    const vad = useVad ? await createVad({ engine: useVad === 'energy' ? 'energy' : 'auto' }) : null;
    if (this.ends.count !== ends) {
      vad?.close();
      throw new AnalysisError(this.ends.reason, this.ends.code);
    }
    if (this.amd) {
      vad?.close();
      throw new AnalysisError('AMD is already running on this endpoint', 'EBUSY');
    }
    const det = new AnsweringMachineDetector({ ...params, initialSilenceStatus, vad: vad ?? undefined });
    return new Promise<AmdResult>((resolve, reject) => {
      this.amd = { det, vad, p: { resolve, reject } };
    });
  }

  waitForBeep(timeoutMs: number, opts: BeepDetectorOptions = {}): Promise<BeepResult> {
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) return Promise.reject(new AnalysisError('waitForBeep needs a positive timeoutMs', 'EINVAL'));
    if (this.beep) return Promise.reject(new AnalysisError('already waiting for a beep on this endpoint', 'EBUSY'));
    const det = new BeepDetector(opts);
    return new Promise<BeepResult>((resolve, reject) => {
      this.beep = { det, p: { resolve, reject }, elapsedMs: 0, timeoutMs };
    });
  }

  /** One inbound frame (20 ms), every tick while something listens. */
  process(frame: Int16Array): void {
    const t = this.tap;
    if (t) {
      const turn = t.turns.push(t.vad.process(frame));
      t.elapsedMs += FRAME_MS;
      if (turn) this.onSpeech({ state: turn, offsetMs: t.elapsedMs });
    }
    const a = this.amd;
    if (a) {
      const ev = a.det.process(frame);
      if (ev?.type === 'verdict') {
        this.amd = null;
        a.vad?.close();
        a.p.resolve({ result: ev.status, cause: ev.cause, offsetMs: ev.offsetMs });
      }
    }
    const b = this.beep;
    if (b) {
      const hit = b.det.process(frame);
      b.elapsedMs += FRAME_MS;
      if (hit) {
        this.beep = null;
        b.p.resolve({ offsetMs: hit.offsetMs, frequency: hit.frequency, durationMs: hit.durationMs });
      } else if (b.elapsedMs >= b.timeoutMs) {
        this.beep = null;
        b.p.reject(new AnalysisError(`no beep within ${b.timeoutMs} ms`, 'ETIMEDOUT'));
      }
    }
  }

  /** The leg is gone: ends everything, the tap too (without a last event). */
  close(reason: string, code: string): void {
    this.closed = true;
    this.tap?.vad.close();
    this.tap = null;
    this.cancel(reason, code);
  }

  /** Ends AMD (one still loading its VAD too) and the beep wait (endpoint gone, or stopped on request). */
  cancel(reason: string, code = 'ECANCELED'): void {
    this.ends = { count: this.ends.count + 1, reason, code };
    const a = this.amd;
    const b = this.beep;
    this.amd = null;
    this.beep = null;
    if (a) {
      a.vad?.close();
      a.p.reject(new AnalysisError(reason, code));
    }
    b?.p.reject(new AnalysisError(reason, code));
  }
}
