/**
 * Real-time transcription of an endpoint (transcribe_start): an audio fork per direction carries
 * 20 ms frames at the leg's rate (16 kHz on a wideband leg, else 8 kHz) from the worker to this thread, where each feeds its own streaming recogniser
 * (media-engine/stt). The fork's backpressure keeps a slow recogniser from ever touching the tick,
 * and the recogniser process itself only starts when transcription is asked for.
 */
import { EventEmitter } from 'node:events';
import type { AudioFork, ForkOptions } from './audio-fork';
import { createSttProvider, type SttStream, type TranscriptEvent } from './stt';

export type TranscribeDirection = 'in' | 'out' | 'both';

export interface TranscribeOptions {
  /** BCP-47 (default en-US) */
  language?: string;
  /** 'in' = what the caller says, 'out' = what the platform plays, 'both' = two separate streams */
  direction?: TranscribeDirection;
  /** restrict recognition to these phrases (far more accurate offline) */
  phrases?: string[];
  /** STT provider name (default pocketsphinx) */
  provider?: string;
}

/** One transcript segment; direction in the platform's words (in = caller, out = platform audio). */
export interface Transcript {
  text: string;
  final: boolean;
  /** start of the segment, ms after transcription started */
  offsetMs: number;
  durationMs: number;
  direction: 'in' | 'out';
  confidence?: number;
}

export interface TranscriberEvents {
  transcript: [Transcript];
  error: [Error];
  /** stopped or aborted: no segment follows */
  end: [];
}

export class Transcriber extends EventEmitter<TranscriberEvents> {
  private readonly parts: Array<{ fork: Pick<AudioFork, 'rate' | 'stop'> | null; stream: SttStream | null }> = [];
  private stopped = false;

  constructor(private readonly opts: TranscribeOptions) {
    super();
    const d = opts.direction ?? 'in';
    if (d !== 'in' && d !== 'out' && d !== 'both') throw new TypeError(`transcribe direction must be in, out or both, not ${String(d)}`);
  }

  /**
   * Opens a fork per direction at the leg's rate (16 kHz on a G.722 or Opus leg, `openFork` is the
   * endpoint's forkAudioStart), then its recogniser told that rate. Frames that arrive before the
   * recogniser exists (none in practice: the fork's reply comes first) are held and written first.
   */
  async start(openFork: (o: ForkOptions) => Promise<Pick<AudioFork, 'rate' | 'stop'>>): Promise<this> {
    const d = this.opts.direction ?? 'in';
    const sides: Array<'in' | 'out'> = d === 'both' ? ['in', 'out'] : [d];
    const provider = createSttProvider(this.opts.provider);
    try {
      for (const side of sides) {
        const early: Int16Array[] = [];
        let stream: SttStream | null = null;
        // write() never blocks: past its backlog the recogniser drops and counts frames
        const fork = await openFork({ mix: side, maxInFlight: 50, legRate: true, onFrame: (f) => (stream ? stream.write(f) : void early.push(f)) });
        if (this.stopped) {
          // stopped while this fork opened: it is not kept (nothing would stop it), nothing more opens
          await fork.stop().catch(() => null);
          return this;
        }
        const part: { fork: Pick<AudioFork, 'rate' | 'stop'> | null; stream: SttStream | null } = { fork, stream: null };
        this.parts.push(part);
        const s = provider.createStream({
          language: this.opts.language,
          phrases: this.opts.phrases,
          direction: side === 'in' ? 'inbound' : 'outbound',
          sampleRate: fork.rate === 16000 ? 16000 : 8000,
        });
        part.stream = stream = s;
        s.on('transcript', (t: TranscriptEvent) => this.emit('transcript', toTranscript(t, side)));
        s.on('error', (e: Error) => this.emit('error', e));
        for (const f of early.splice(0)) s.write(f);
      }
    } catch (e) {
      this.abort();
      throw e;
    }
    return this;
  }

  /** Stops the audio; resolves once the recognisers have given their last segments. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.allSettled(this.parts.flatMap((p) => (p.fork ? [p.fork.stop()] : [])));
    await Promise.allSettled(this.parts.flatMap((p) => (p.stream ? [p.stream.end()] : [])));
    this.emit('end');
  }

  /** Stops at once, dropping audio not yet recognised (endpoint gone). */
  abort(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const p of this.parts) {
      p.fork?.stop().catch(() => {});
      p.stream?.abort();
    }
    this.emit('end');
  }

  get droppedFrames(): number {
    return this.parts.reduce((n, p) => n + (p.stream?.droppedFrames ?? 0), 0);
  }
}

function toTranscript(t: TranscriptEvent, side: 'in' | 'out'): Transcript {
  const r: Transcript = { text: t.text, final: t.final, offsetMs: t.offsetMs, durationMs: t.durationMs, direction: side };
  if (t.confidence !== undefined) r.confidence = t.confidence;
  return r;
}

/** How a transcription opens a fork of its leg: the engine's AudioFork, or a backend's (media-app's fsmrf legs). */
export type OpenTranscriptionFork = (o: ForkOptions) => Promise<Pick<AudioFork, 'rate' | 'stop'>>;

/**
 * A leg's live transcription, one at a time (transcribeStart / transcribeStop): a Transcriber on forks of
 * the leg of its own (not the leg's forkAudioStart forks: forkAudioStop does not end it), its segments and
 * errors handed to `on`. The embedded engine's Endpoint and media-app's fsmrf legs each hold one.
 */
export class LegTranscription {
  private running: Transcriber | null = null;

  constructor(
    private readonly open: OpenTranscriptionFork,
    private readonly on: { transcript: (t: Transcript) => void; error: (e: Error) => void },
  ) {}

  /** Whether a transcription runs. */
  get active(): boolean {
    return this.running !== null;
  }

  /** Starts recognising; rejects, leaving nothing running, when a fork or the provider cannot start. */
  async start(opts: TranscribeOptions = {}): Promise<void> {
    if (this.running) throw new Error('transcription is already running on this endpoint');
    const t = new Transcriber(opts);
    this.running = t;
    t.on('transcript', (x) => this.on.transcript(x));
    t.on('error', (e: Error) => this.on.error(e));
    try {
      await t.start(this.open);
    } catch (e) {
      if (this.running === t) this.running = null;
      throw e;
    }
  }

  /** Stops recognising; resolves once the last segments were given (a hangup's too). */
  async stop(): Promise<void> {
    const t = this.running;
    this.running = null;
    await t?.stop();
  }

  /** Stops at once, dropping audio not yet recognised (the leg is gone with its worker). */
  abort(): void {
    this.running?.abort();
    this.running = null;
  }
}
