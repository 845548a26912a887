/**
 * AMD, the voicemail beep and the VAD tap on the fsmrf backend (README.md beside, "Audio taps"): the
 * engine's own classifiers (media-engine's LegAnalysis: app_amd timing over a VAD, the beep detector,
 * the turns of speech), fed the caller's 20 ms frames from an audio fork of the leg (fork-tap.ts),
 * opened while a detection or the tap runs and stopped when none does. A fork that ends by itself (its
 * connection dropped) rejects what runs with EPIPE and ends the tap (a turn in progress with its
 * 'stop'); the leg's end with ECANCELED; never a hang.
 */
import { LegAnalysis, type AmdRequest, type AmdResult, type BeepResult, type ForkOptions, type SpeechEvent, type VadTapOptions } from '../../../media-engine';
import type { MediaFork } from '../tap';

export class ForkAnalysis {
  private readonly analysis: LegAnalysis;
  private opening: Promise<MediaFork> | null = null;
  private closed = false;

  /** `open`: an 'in' fork of the leg at 8 kHz (the endpoint's forkAudioStart); `onSpeech`: the VAD tap's turns. */
  constructor(
    private readonly open: (o: ForkOptions) => Promise<MediaFork>,
    onSpeech: (e: SpeechEvent) => void = () => undefined,
  ) {
    this.analysis = new LegAnalysis(onSpeech);
  }

  /** The VAD tap: 'speech' where the caller's turns start and stop, until vadStop (EBUSY while one runs). */
  async vadStart(o: VadTapOptions): Promise<void> {
    if (this.closed) throw new Error('endpoint is destroyed');
    await this.analysis.startVad(o);
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
    const opening = this.open({ mix: 'in', onFrame: (f) => this.analysis.process(f) }).then((fork) => {
      void fork.ended?.then((why) => {
        // a fork already released (its stop failed, or raced its drop) says nothing of the one running now
        if (why === 'stopped' || this.opening !== opening) return;
        // the next detection or tap opens a fork of its own
        this.opening = null;
        this.analysis.cancel(`the audio fork ended: ${why}`, 'EPIPE');
        this.analysis.stopVad();
      });
      return fork;
    });
    this.opening = opening;
    return opening;
  }

  private async release(): Promise<void> {
    const opening = this.opening;
    this.opening = null;
    const fork = await opening?.catch(() => null);
    await fork?.stop().catch(() => null);
  }
}
