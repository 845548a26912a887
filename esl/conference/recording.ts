/**
 * A room's recordings (mod_conference's conference_record_*): each a WAV of the whole mix (what a
 * member who hears everyone hears, files played into the room included), 16-bit mono at 8 kHz, taken
 * from an audio fork of the engine's mixer and written by the engine's WavWriter. Several at once, by
 * path; pause drops the mix's frames until resume (the file has no gap marker, as FreeSWITCH's
 * SCFC_PAUSE_WRITE). Events: start-recording (with Error when the file cannot be opened),
 * stop-recording (Samples-Out, Samplerate, Milliseconds-Elapsed), pause-recording / resume-recording.
 */
import fs from 'node:fs';
import { WavWriter, type AudioFork, type Conference } from '../../media-engine';
import { confine } from './files';

const RATE = 8000;

/** Why a recording path is refused: a `..` segment, or outside the recordings directory. */
export type RecordingRefusal = 'parent' | 'outside';

interface Recording {
  readonly path: string;
  readonly writer: WavWriter;
  fork: AudioFork | null;
  paused: boolean;
  stopped: boolean;
}

export class RoomRecordings {
  private readonly recs = new Map<string, Recording>();

  constructor(
    private readonly media: Conference,
    private readonly fire: (action: string, own: [string, string][]) => void,
    private readonly failed: (e: Error) => void,
    /** the recordings directory (ESL_RECORDINGS_DIR): every recording is written inside it */
    private readonly root: string,
  ) {}

  get count(): number {
    return this.recs.size;
  }

  paths(): string[] {
    return [...this.recs.keys()];
  }

  has(p: string): boolean {
    return this.recs.has(p);
  }

  /**
   * Starts recording to `p` (then the API answers `+OK Record file`): a `.wav` path inside the recordings
   * directory (a relative one under it) that can be opened, else start-recording with FreeSWITCH's Error
   * and nothing recorded. A path with a `..` segment or outside the directory is refused before anything
   * is opened or fired: the API answers -ERR.
   */
  start(p: string): RecordingRefusal | null {
    const at = confine(this.root, p);
    if (!at.ok) return at.why;
    let writer: WavWriter;
    try {
      if (!/\.wav$/i.test(p)) throw new Error('not a .wav path');
      fs.mkdirSync(this.root, { recursive: true });
      writer = new WavWriter(at.path, { sampleRate: RATE });
    } catch {
      this.fire('start-recording', [
        ['Path', p],
        ['Error', 'File could not be opened for recording'],
      ]);
      return null;
    }
    const rec: Recording = { path: p, writer, fork: null, paused: false, stopped: false };
    this.recs.set(p, rec);
    this.fire('start-recording', [['Path', p]]);
    this.media.forkAudioStart({ onFrame: (frame) => void (rec.paused || rec.stopped || rec.writer.write(frame)) }).then(
      (fork) => {
        rec.fork = fork;
        if (rec.stopped) void fork.stop();
      },
      (e: unknown) => {
        this.failed(e instanceof Error ? e : new Error(String(e)));
        this.stop(p);
      },
    );
    return null;
  }

  /** Stops one recording (or every one with null): returns the paths stopped, each with its stop-recording. */
  stop(p: string | null): string[] {
    const which = p === null ? [...this.recs.values()] : [this.recs.get(p)].filter((r): r is Recording => r !== undefined);
    for (const rec of which) {
      rec.stopped = true;
      this.recs.delete(rec.path);
      void rec.fork?.stop();
      const sum = rec.writer.close();
      this.fire('stop-recording', [
        ['Path', rec.path],
        ['Other-Recordings', this.recs.size ? 'true' : 'false'],
        ['Samples-Out', String(sum.samples)],
        ['Samplerate', String(RATE)],
        ['Milliseconds-Elapsed', String(Math.floor(sum.samples / (RATE / 1000)))],
      ]);
    }
    return which.map((r) => r.path);
  }

  stopAll(): void {
    this.stop(null);
  }

  /** pause / resume one recording: false when there is none at that path. */
  pause(p: string, on: boolean): boolean {
    const rec = this.recs.get(p);
    if (!rec) return false;
    rec.paused = on;
    this.fire(on ? 'pause-recording' : 'resume-recording', [
      ['Path', p],
      ['Other-Recordings', this.recs.size ? 'true' : 'false'],
    ]);
    return true;
  }
}
