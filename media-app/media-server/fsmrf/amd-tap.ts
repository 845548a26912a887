/**
 * AMD, the voicemail beep and the VAD tap on the fsmrf backend (README.md beside, "Audio taps"): the
 * engine's own classifiers (media-engine's LegAnalysis: app_amd timing over a VAD, the beep detector,
 * the turns of speech), fed the caller's 20 ms frames from an audio fork of the leg (fork-tap.ts),
 * opened while a detection or the tap runs and stopped when none does. A fork that ends by itself (its
 * connection dropped) rejects AMD and the beep wait with EPIPE and ends a turn in progress with its
 * 'stop'; the tap goes on on a new fork of the leg if the dropped one had fed it, else it ends, said in
 * the log, as it does when the new fork cannot open. A switch that keeps dropping forks is not reopened
 * for ever: a fork that fed less than a second of audio is a short one, and the third short one in a
 * row ends the tap (counted in audio, so no timer). The leg's end rejects with ECANCELED; never a hang.
 */
import { LegAnalysis, type AmdRequest, type AmdResult, type BeepResult, type ForkOptions, type SpeechEvent, type VadTapOptions } from '../../../media-engine';
import type { MediaFork } from '../tap';
import type { ForkLog } from './fork-tap';

/** A fork that fed fewer frames than this (1 s of 20 ms frames) before it dropped is a short one. */
const SHORT_FORK_FRAMES = 50;
/** The VAD tap ends at this many short forks in a row. */
const SHORT_FORKS_MAX = 3;

export class ForkAnalysis {
  private readonly analysis: LegAnalysis;
  private opening: Promise<MediaFork> | null = null;
  private closed = false;
  /** Short forks in a row under the VAD tap now running (a new tap starts at 0). */
  private shortForks = 0;

  /** `open`: an 'in' fork of the leg at 8 kHz (the endpoint's forkAudioStart); `onSpeech`: the VAD tap's turns; `log`: a tap's fork lost. */
  constructor(
    private readonly open: (o: ForkOptions) => Promise<MediaFork>,
    onSpeech: (e: SpeechEvent) => void = () => undefined,
    private readonly log: ForkLog = { warn: () => undefined },
  ) {
    this.analysis = new LegAnalysis(onSpeech);
  }

  /** The VAD tap: 'speech' where the caller's turns start and stop, until vadStop (EBUSY while one runs). */
  async vadStart(o: VadTapOptions): Promise<void> {
    if (this.closed) throw new Error('endpoint is destroyed');
    await this.analysis.startVad(o);
    this.shortForks = 0;
    // the leg's end while the VAD loaded: no tap, said so; a vadStop meanwhile: the tap did not start, as asked
    if (this.closed) throw Object.assign(new Error('the endpoint is gone'), { code: 'ECANCELED' });
    if (!this.analysis.active) return;
    try {
      await this.frames();
    } catch (e) {
      this.analysis.stopVad();
      if (!this.analysis.active) await this.release();
      throw e;
    }
    if (!this.analysis.active) await this.release();
  }

  /** Ends the tap (a turn in progress ends with its 'stop'); the fork too when nothing else listens. */
  async vadStop(): Promise<void> {
    this.analysis.stopVad();
    if (!this.analysis.active) await this.release();
  }

  /** app_amd's verdict on what the caller says. */
  amd(req: AmdRequest = {}): Promise<AmdResult> {
    return this.running(this.analysis.startAmd(req));
  }

  /** The first beep within `timeoutMs` (rejects with code ETIMEDOUT after it). */
  waitForBeep(timeoutMs: number): Promise<BeepResult> {
    return this.running(this.analysis.waitForBeep(timeoutMs));
  }

  /** Ends AMD and the beep wait (they reject with ECANCELED), and the fork unless the VAD tap still runs. */
  async stop(): Promise<void> {
    this.analysis.cancel('stopped', 'ECANCELED');
    if (!this.analysis.active) await this.release();
  }

  /** The leg is gone: what runs rejects, the fork is stopped. */
  close(): void {
    this.closed = true;
    this.analysis.close('the endpoint is gone', 'ECANCELED');
    void this.release();
  }

  private async running<T>(detection: Promise<T>): Promise<T> {
    detection.catch(() => undefined); // awaited below, after the fork opened
    if (this.closed) this.analysis.cancel('the endpoint is gone', 'ECANCELED');
    try {
      await this.frames();
    } catch (e) {
      // no fork, no frames: what was asked fails now rather than waiting for ever
      this.analysis.cancel(`the audio fork could not start: ${e instanceof Error ? e.message : String(e)}`, 'EPIPE');
      await this.release();
      throw e;
    }
    try {
      return await detection;
    } finally {
      if (!this.analysis.active) await this.release();
    }
  }

  /** The fork that feeds the classifiers, opened once. */
  private frames(): Promise<MediaFork> {
    if (this.opening) return this.opening;
    let fed = 0;
    const onFrame = (f: Int16Array) => (fed++, this.analysis.process(f));
    const opening = this.open({ mix: 'in', onFrame }).then((fork) => {
      void fork.ended
        ?.then((why) => {
          // a fork already released (its stop failed, or raced its drop) says nothing of the one running now
          if (why === 'stopped' || this.opening !== opening) return;
          this.opening = null;
          this.analysis.cancel(`the audio fork ended: ${why}`, 'EPIPE');
          this.analysis.breakTurn();
          if (this.analysis.tapping) this.tapForkLost(why, fed);
        })
        // a 'speech' listener that threw on the turn's end: said, never an unhandled rejection
        .catch((e: unknown) => this.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'the end of an audio fork of the VAD tap failed'));
      return fork;
    });
    this.opening = opening;
    return opening;
  }

  /** The VAD tap's fork dropped after `fed` frames: a new fork of the leg feeds the tap, unless that one fed
   * none or was the last of SHORT_FORKS_MAX short ones in a row; then the tap ends. */
  private tapForkLost(why: string, fed: number): void {
    if (this.closed) return;
    if (fed === 0) {
      this.analysis.stopVad();
      return this.log.warn({ why }, "the VAD tap's audio fork dropped before it gave a frame: the VAD tap ends");
    }
    this.shortForks = fed < SHORT_FORK_FRAMES ? this.shortForks + 1 : 0;
    if (this.shortForks >= SHORT_FORKS_MAX) {
      this.analysis.stopVad();
      return this.log.warn({ why, forks: this.shortForks }, "the VAD tap's audio forks dropped, each before a second of audio, too many times in a row: the VAD tap ends");
    }
    const reopening = this.frames();
    // said once the new fork runs or failed, and only while it is still this tap's (an owner's vadStop or the
    // leg's end released it meanwhile: the tap, or the next one, is theirs)
    const ours = () => !this.closed && this.opening === reopening;
    reopening.then(
      () => ours() && this.log.warn({ why }, "the VAD tap's audio fork dropped: a new fork of the leg feeds the tap"),
      (e: unknown) => {
        if (!ours()) return;
        this.opening = null;
        this.analysis.stopVad();
        this.log.warn({ why, err: e instanceof Error ? e.message : String(e) }, "the VAD tap's audio fork dropped and a new one could not open: the VAD tap ends");
      },
    );
  }

  private async release(): Promise<void> {
    const opening = this.opening;
    this.opening = null;
    const fork = await opening?.catch(() => null);
    await fork?.stop().catch(() => null);
  }
}
