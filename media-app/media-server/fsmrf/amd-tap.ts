/**
 * AMD and the voicemail beep on the fsmrf backend (README.md beside, "Audio taps"): the engine's own
 * classifiers (media-engine's LegAnalysis: app_amd timing over a VAD, the beep detector), fed the
 * caller's 20 ms frames from an audio fork of the leg (fork-tap.ts), opened while a detection runs and
 * stopped when none does. A fork that ends by itself (its connection dropped) rejects what runs with
 * EPIPE; the leg's end with ECANCELED; never a hang.
 */
import { LegAnalysis, type AmdRequest, type AmdResult, type BeepResult, type ForkOptions } from '../../../media-engine';
import type { MediaFork } from '../tap';

export class ForkAnalysis {
  private readonly analysis = new LegAnalysis();
  private opening: Promise<MediaFork> | null = null;
  private closed = false;

  /** `open`: an 'in' fork of the leg at 8 kHz (the endpoint's forkAudioStart). */
  constructor(private readonly open: (o: ForkOptions) => Promise<MediaFork>) {}

  /** app_amd's verdict on what the caller says. */
  amd(req: AmdRequest = {}): Promise<AmdResult> {
    return this.running(this.analysis.startAmd(req));
  }

  /** The first beep within `timeoutMs` (rejects with code ETIMEDOUT after it). */
  waitForBeep(timeoutMs: number): Promise<BeepResult> {
    return this.running(this.analysis.waitForBeep(timeoutMs));
  }

  /** Ends what runs (it rejects with ECANCELED) and the fork. */
  async stop(): Promise<void> {
    this.analysis.cancel('stopped', 'ECANCELED');
    await this.release();
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
    this.opening ??= this.open({ mix: 'in', onFrame: (f) => this.analysis.process(f) }).then((fork) => {
      void fork.ended?.then((why) => {
        if (why !== 'stopped') this.analysis.cancel(`the audio fork ended: ${why}`, 'EPIPE');
      });
      return fork;
    });
    return this.opening;
  }

  private async release(): Promise<void> {
    const opening = this.opening;
    this.opening = null;
    const fork = await opening?.catch(() => null);
    await fork?.stop().catch(() => null);
  }
}
