/**
 * Answering machine detection in the manner of Asterisk's app_amd: frames are classified voice or
 * silence, and timers over words and silences give HUMAN, MACHINE or NOTSURE with app_amd's causes:
 *
 *   INITIALSILENCE-<silence>-<initialSilence>   nobody spoke first (NOTSURE here; app_amd says MACHINE,
 *                                               see `initialSilenceStatus`)
 *   HUMAN-<silence>-<afterGreetingSilence>      a short greeting followed by silence ("hello?")
 *   LONGGREETING-<voice>-<greeting>             talked for longer than a person answering does
 *   MAXWORDS-<words>-<maximumNumberOfWords>     too many words
 *   MAXWORDLENGTH-<voice>-<maximumWordLength>   one "word" too long (music, a tone)
 *   TOOLONG-<total>                             no decision within totalAnalysisTime (NOTSURE)
 *
 * After a MACHINE verdict the detector can go on listening for the voicemail beep (BeepDetector), so
 * a message can be dropped right after it.
 */
import { FRAME_MS, FRAME_SAMPLES, meanAbs, type Frame } from './frame';
import { BeepDetector, type BeepDetection, type BeepDetectorOptions } from './beep-detector';
import type { Vad } from './vad';

/** app_amd's parameters (amd.conf names in camelCase), all in ms except counts and the threshold. */
export interface AmdParams {
  initialSilence: number; // 2500
  greeting: number; // 1500
  afterGreetingSilence: number; // 800
  totalAnalysisTime: number; // 5000
  minimumWordLength: number; // 100
  betweenWordsSilence: number; // 50
  maximumNumberOfWords: number; // 3
  /** Mean absolute amplitude under which a frame is silence (app_amd's silence_threshold). */
  silenceThreshold: number; // 256
  maximumWordLength: number; // 5000
}

const FRAME_LEN_MS = FRAME_MS;
const N = FRAME_SAMPLES;

export const AMD_DEFAULTS: Readonly<AmdParams> = {
  initialSilence: 2500,
  greeting: 1500,
  afterGreetingSilence: 800,
  totalAnalysisTime: 5000,
  minimumWordLength: 100,
  betweenWordsSilence: 50,
  maximumNumberOfWords: 3,
  silenceThreshold: 256,
  maximumWordLength: 5000,
};

export type AmdStatus = 'HUMAN' | 'MACHINE' | 'NOTSURE';

export type AmdEvent = { type: 'verdict'; status: AmdStatus; cause: string; offsetMs: number } | ({ type: 'beep' } & BeepDetection) | { type: 'beep-timeout'; offsetMs: number };

export interface AmdOptions extends Partial<AmdParams> {
  /** Frame classifier on top of the energy threshold (a frame is voice only if both agree). */
  vad?: Vad;
  /** Status reported for INITIALSILENCE. Default 'NOTSURE' (app_amd: 'MACHINE'). */
  initialSilenceStatus?: AmdStatus;
  /** Keep listening for a beep after MACHINE. Default false. */
  detectBeep?: boolean;
  /** Give up the beep search after this long past the verdict. Default 20000 ms. */
  beepTimeoutMs?: number;
  beep?: BeepDetectorOptions;
}

type State = 'IN_WORD' | 'IN_SILENCE';

export class AnsweringMachineDetector {
  readonly params: Readonly<AmdParams>;
  private readonly vad?: Vad;
  private readonly beepDetector: BeepDetector | null;
  private readonly initialSilenceStatus: AmdStatus;
  private readonly beepTimeoutMs: number;
  private totalTime = 0;
  private silenceDuration = 0;
  private consecutiveVoice = 0;
  private voiceDuration = 0;
  private words = 0;
  private state: State = 'IN_WORD'; // app_amd starts "in word" so a first silence is noticed
  private inInitialSilence = true;
  private inGreeting = false;
  private verdictAt = -1;
  private finished = false;
  /** The verdict, once given. */
  verdict: { status: AmdStatus; cause: string; offsetMs: number } | null = null;

  constructor(opts: AmdOptions = {}) {
    const p = { ...AMD_DEFAULTS };
    for (const k of Object.keys(AMD_DEFAULTS) as (keyof AmdParams)[]) {
      const v = opts[k];
      if (v !== undefined) {
        if (!Number.isFinite(v) || v < 0) throw new RangeError(`AMD: ${k} must be a non-negative number`);
        p[k] = v;
      }
    }
    this.params = p;
    this.vad = opts.vad;
    this.initialSilenceStatus = opts.initialSilenceStatus ?? 'NOTSURE';
    this.beepDetector = opts.detectBeep ? new BeepDetector(opts.beep) : null;
    this.beepTimeoutMs = opts.beepTimeoutMs ?? 20000;
  }

  /** True once nothing more will be reported (verdict given, and beep found/timed out if asked). */
  get done(): boolean {
    return this.finished;
  }

  /** Feed one 20 ms frame; returns an event when something is decided. */
  process(frame: Frame): AmdEvent | null {
    if (frame.length !== N) throw new RangeError(`AMD: frame must have ${N} samples`);
    if (this.finished) return null;
    const frameStart = this.totalTime;
    this.totalTime += FRAME_LEN_MS;
    if (this.verdict) return this.listenForBeep(frame, frameStart);

    const loud = meanAbs(frame) >= this.params.silenceThreshold;
    // The VAD sees every frame (it keeps state) but only vetoes loud frames.
    const vadVoice = this.vad ? this.vad.process(frame) : true;
    const voice = loud && vadVoice;
    const p = this.params;

    if (this.totalTime >= p.totalAnalysisTime) return this.decide('NOTSURE', `TOOLONG-${this.totalTime}`);

    if (!voice) {
      this.silenceDuration += FRAME_LEN_MS;
      if (this.silenceDuration >= p.betweenWordsSilence) {
        this.state = 'IN_SILENCE';
        this.consecutiveVoice = 0;
      }
      if (this.inInitialSilence && this.silenceDuration >= p.initialSilence) {
        return this.decide(this.initialSilenceStatus, `INITIALSILENCE-${this.silenceDuration}-${p.initialSilence}`);
      }
      if (this.inGreeting && this.silenceDuration >= p.afterGreetingSilence) {
        return this.decide('HUMAN', `HUMAN-${this.silenceDuration}-${p.afterGreetingSilence}`);
      }
      return null;
    }

    this.silenceDuration = 0;
    this.consecutiveVoice += FRAME_LEN_MS;
    this.voiceDuration += FRAME_LEN_MS;
    // A word counts once enough consecutive voice follows a silence.
    if (this.consecutiveVoice >= p.minimumWordLength && this.state === 'IN_SILENCE') {
      this.words++;
      this.state = 'IN_WORD';
    }
    if (this.consecutiveVoice >= p.maximumWordLength) {
      return this.decide('MACHINE', `MAXWORDLENGTH-${this.consecutiveVoice}-${p.maximumWordLength}`);
    }
    if (this.words >= p.maximumNumberOfWords) {
      return this.decide('MACHINE', `MAXWORDS-${this.words}-${p.maximumNumberOfWords}`);
    }
    if (this.inGreeting && this.voiceDuration >= p.greeting) {
      return this.decide('MACHINE', `LONGGREETING-${this.voiceDuration}-${p.greeting}`);
    }
    if (this.voiceDuration >= p.minimumWordLength) {
      this.inInitialSilence = false;
      this.inGreeting = true;
    }
    return null;
  }

  private decide(status: AmdStatus, cause: string): AmdEvent {
    this.verdict = { status, cause, offsetMs: this.totalTime };
    this.verdictAt = this.totalTime;
    if (status !== 'MACHINE' || !this.beepDetector) this.finished = true;
    return { type: 'verdict', ...this.verdict };
  }

  private listenForBeep(frame: Frame, frameStart: number): AmdEvent | null {
    const bd = this.beepDetector!;
    const hit = bd.process(frame);
    if (hit) {
      this.finished = true;
      // The beep detector counts from its own first frame, which is the frame after the verdict.
      return { type: 'beep', ...hit, offsetMs: hit.offsetMs + this.verdictAt };
    }
    if (frameStart + FRAME_LEN_MS - this.verdictAt >= this.beepTimeoutMs) {
      this.finished = true;
      return { type: 'beep-timeout', offsetMs: this.totalTime };
    }
    return null;
  }
}
