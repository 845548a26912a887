/**
 * A leg's audio taps on the fsmrf backend (README.md beside, "Audio taps"), every one a fork of the leg
 * over the backend's fork server (fork-tap.ts): the forks its owner asked for (forkAudioStart), the
 * classifiers' fork (AMD, the beep, the VAD tap: amd-tap.ts) and live transcription's (media-engine's
 * LegTranscription, as on the embedded engine: the same recognisers, so the same words; a fork the switch
 * drops is a transcription error, that side hearing nothing more). The leg's end closes them: what runs
 * rejects, transcription gives its last segments.
 */
import {
  LegTranscription,
  type AmdRequest,
  type AmdResult,
  type BeepResult,
  type ForkOptions,
  type ForkStats,
  type SpeechEvent,
  type Transcript,
  type TranscribeOptions,
  type VadTapOptions,
} from '../../../media-engine';
import type { MediaFork } from '../tap';
import { ForkAnalysis } from './amd-tap';
import type { ForkLog, FsmrfFork } from './fork-tap';

/** Where the taps' results go: the leg's events. */
export interface LegTapEvents {
  speech: (e: SpeechEvent) => void;
  transcript: (t: Transcript) => void;
  transcriptionError: (e: Error) => void;
}

export class LegTaps {
  /** the forks asked for (forkAudioStart) not stopped yet */
  private readonly forks = new Set<MediaFork>();
  private readonly analysis: ForkAnalysis;
  private readonly transcription: LegTranscription;

  /** `open`: a fork of the leg (rejects once the leg is gone, or with no fork server). */
  constructor(
    private readonly open: (o: ForkOptions) => Promise<FsmrfFork>,
    events: LegTapEvents,
    private readonly log: ForkLog,
  ) {
    // the classifiers' fork is theirs alone: forkStop() of the owner's forks leaves AMD and the VAD tap running
    this.analysis = new ForkAnalysis(open, events.speech, log);
    this.transcription = new LegTranscription((o) => this.transcriptionFork(o, events.transcriptionError), { transcript: events.transcript, error: events.transcriptionError });
  }

  /** A fork for transcription: one the switch drops while it runs is said as the recognisers' errors are. */
  private async transcriptionFork(o: ForkOptions, onError: (e: Error) => void): Promise<FsmrfFork> {
    const fork = await this.open(o);
    void fork.ended
      .then((why) => {
        if (why !== 'stopped' && this.transcription.active) onError(new Error(`the audio fork of live transcription (${o.mix}) ended: ${why}`));
      })
      // a listener that threw: said, never an unhandled rejection
      .catch((e: unknown) => this.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'the end of the audio fork of live transcription failed'));
    return fork;
  }

  /** A fork of the leg for its owner; forkStop() without one stops every such fork. */
  async forkStart(opts: ForkOptions): Promise<MediaFork> {
    const fork = await this.open(opts);
    this.forks.add(fork);
    void fork.ended.then(() => this.forks.delete(fork));
    return fork;
  }

  /** Stops `fork`, or every fork asked for; the last one's counters. */
  async forkStop(fork?: MediaFork): Promise<ForkStats | null> {
    let last: ForkStats | null = null;
    for (const f of fork ? [fork] : [...this.forks]) {
      this.forks.delete(f);
      last = (await f.stop()) ?? last;
    }
    return last;
  }

  amd(opts?: AmdRequest): Promise<AmdResult> {
    return this.analysis.amd(opts);
  }
  stopAmd(): Promise<void> {
    return this.analysis.stop();
  }
  waitForBeep(timeoutMs: number): Promise<BeepResult> {
    return this.analysis.waitForBeep(timeoutMs);
  }
  vadStart(opts: VadTapOptions): Promise<void> {
    return this.analysis.vadStart(opts);
  }
  vadStop(): Promise<void> {
    return this.analysis.vadStop();
  }
  transcribeStart(opts: TranscribeOptions): Promise<void> {
    return this.transcription.start(opts);
  }
  transcribeStop(): Promise<void> {
    return this.transcription.stop();
  }

  /** The leg is gone: AMD, the beep and the VAD tap end (ECANCELED); transcription gives its last segments, as a hangup on the engine. */
  close(): void {
    this.analysis.close();
    this.transcription.stop().catch(() => undefined);
  }
}
