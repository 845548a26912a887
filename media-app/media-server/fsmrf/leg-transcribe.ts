/**
 * Live transcription of a leg on the fsmrf backend (README.md beside, "Audio taps"): media-engine's own
 * Transcriber (the recognisers the embedded engine runs) on forks of the leg of their own, one per side
 * asked (`in`, `out`, both), so a transcribe reads the same words on both backends. Its forks are not the
 * leg's `forkAudioStart` forks: forkAudioStop() does not end transcription. The leg's end stops it as a
 * hangup does on the engine: the recognisers still give their last segments. A fork the switch drops
 * while transcription runs is reported as a transcription error (that side hears nothing more).
 */
import { Transcriber, type ForkOptions, type Transcript, type TranscribeOptions } from '../../../media-engine';
import type { MediaFork } from '../tap';

export class LegTranscription {
  private running: Transcriber | null = null;

  /** `open`: a fork of the leg; the recognisers' segments and errors go to `onTranscript` / `onError`. */
  constructor(
    private readonly open: (o: ForkOptions) => Promise<MediaFork>,
    private readonly onTranscript: (t: Transcript) => void,
    private readonly onError: (e: Error) => void,
  ) {}

  /** Starts recognising; rejects, leaving nothing running, when a fork or the provider cannot start. */
  async start(opts: TranscribeOptions = {}): Promise<void> {
    if (this.running) throw new Error('transcription is already running on this endpoint');
    const t = new Transcriber(opts);
    this.running = t;
    t.on('transcript', (x: Transcript) => this.onTranscript(x));
    t.on('error', (e: Error) => this.onError(e));
    // a fork the switch dropped: that side hears nothing more, said as the recognisers' errors are
    const watched = async (o: ForkOptions) => {
      const fork = await this.open(o);
      void fork.ended?.then((why) => {
        if (why !== 'stopped' && this.running === t) this.onError(new Error(`the audio fork of live transcription (${o.mix}) ended: ${why}`));
      });
      return fork;
    };
    try {
      await t.start(watched);
    } catch (e) {
      if (this.running === t) this.running = null;
      throw e;
    }
  }

  /** Stops recognising; resolves once the last segments were given. */
  async stop(): Promise<void> {
    const t = this.running;
    this.running = null;
    await t?.stop();
  }
}
