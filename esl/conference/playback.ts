/**
 * A room's file queue (mod_conference's conference_file_play over the conference's fnode list): files
 * played into the mix one after another, each heard by every member that hears the room and taken by
 * the room's recordings. The audio goes in through one audio fork of the engine's mixer (its injected
 * audio is a member of the mix that hears nothing). Each file: play-file when queued (the API fires it),
 * play-file-done with seconds/milliseconds/samples when it has played or was stopped.
 */
import { parseTeletone, readWav, ToneSource, type AudioFork, type Conference, type ToneSpec } from '../../media-engine';
import { confine } from './files';

/** A file read for the mix: mono 16-bit samples at 8 or 16 kHz (the rates the mix takes). */
export interface QueuedFile {
  /** the file as the command named it (the events' File) */
  file: string;
  /** where it was read: resolved inside the sounds directory */
  path: string;
  samples: Int16Array;
  rate: 8000 | 16000;
}

/** Why a file is not played: a `..` segment, outside the sounds directory, or not a WAV the room can play. */
export type RoomFileRefusal = 'parent' | 'outside' | 'missing';

/** The longest tone_stream the room renders (one pass of a loop included): a minute of samples. */
const TONE_MAX_MS = 60_000;

/**
 * A tone_stream://%(on,off,freq…)[;loops=N] script (mod_tone_stream's teletone, as media-engine reads it)
 * rendered to its samples at 8 kHz; null when it is not one the room plays: not a %(…) script, a bad
 * one, endless (loops=-1: a file queue plays each file to its end) or over a minute.
 */
function readTone(file: string): QueuedFile | null {
  let spec: ToneSpec;
  try {
    spec = parseTeletone(file.slice('tone_stream://'.length));
  } catch {
    return null;
  }
  if (spec.repeat === true) return null;
  const ms = spec.segments.reduce((t, seg) => t + seg.ms, 0) * (typeof spec.repeat === 'number' ? spec.repeat : 1);
  if (ms > TONE_MAX_MS) return null;
  // the script's own length plays: the source pads its last frame with silence
  const samples = new Int16Array(Math.ceil((ms * 8) / 160) * 160);
  const source = new ToneSource(spec);
  for (let at = 0; at < samples.length; at += 160) if (!source.readFrame(samples.subarray(at, at + 160))) break;
  return { file, path: file, samples: samples.subarray(0, Math.round(ms * 8)), rate: 8000 };
}

/** How long the first frame of an injection may take to go out before the file is timed from now. */
const START_WAIT_MS = 1000;

/**
 * Reads a file the room can play: a WAV, mono, 16-bit linear or G.711, at 8 or 16 kHz, inside the sounds
 * directory `root` (files.ts); a relative path under `soundPrefix` (itself under the root), else the root.
 */
export function readRoomFile(file: string, soundPrefix: string, root: string): QueuedFile | RoomFileRefusal {
  if (/^tone_stream:\/\//i.test(file)) return readTone(file) ?? 'missing';
  const local = file.startsWith('file://') ? file.slice(7) : file;
  if (/^[a-z_]+:\/\//i.test(local)) return 'missing';
  const at = confine(root, local, soundPrefix || root);
  if (!at.ok) return at.why;
  try {
    const { info, samples } = readWav(at.path);
    const rate = info.format.sampleRate;
    if (info.format.channels !== 1 || (rate !== 8000 && rate !== 16000)) return 'missing';
    return { file, path: at.path, samples, rate };
  } catch {
    return 'missing';
  }
}

/**
 * Injects `f` into `fork` (its audio mixed on top of what the fork's side hears) and waits until it has
 * played out, timed from its first frame out, or until the function given to `stopWith` ends it; resolves
 * with the samples played (0 when `closed()` once it started). The timer is the file's, cleared by the stop.
 */
export async function injectFile(fork: AudioFork, f: QueuedFile, stopWith: (end: () => void) => void, closed: () => boolean): Promise<number> {
  const started = fork.nextStart(START_WAIT_MS);
  fork.inject(f.samples, f.rate);
  const at = (await started) ?? Date.now();
  const ms = (f.samples.length * 1000) / f.rate;
  if (closed()) return 0;
  const stoppedAt = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), Math.max(0, at + ms - Date.now()));
    stopWith(() => (clearTimeout(timer), resolve(Date.now())));
  });
  if (stoppedAt === null) return f.samples.length;
  return Math.min(f.samples.length, Math.max(0, Math.round(((stoppedAt - at) * f.rate) / 1000)));
}

export class RoomPlayer {
  private readonly queue: QueuedFile[] = [];
  private fork: AudioFork | null = null;
  private running = false;
  private closed = false;
  /** the playing file's timer and its early end (stop, close), owned by that file */
  private playing: { end: () => void } | null = null;

  constructor(
    private readonly media: Conference,
    private readonly fire: (action: string, own: [string, string][]) => void,
  ) {}

  /** Queues a file read by readRoomFile; it plays after the ones before it. */
  enqueue(f: QueuedFile): void {
    if (this.closed) return;
    this.queue.push(f);
    void this.drain();
  }

  /** `stop [all|current]`: the playing file (current) or every queued one; returns how many stopped. */
  stop(which: 'current' | 'all'): number {
    const n = which === 'all' ? this.queue.length : Math.min(1, this.queue.length);
    if (which === 'all') this.queue.splice(1).forEach((f) => this.done(f, 0));
    void this.fork?.clearInjected().catch(() => undefined);
    this.playing?.end();
    return n;
  }

  /** The room ended: every file stopped, the fork gone. */
  close(): void {
    if (this.closed) return;
    this.stop('all');
    this.closed = true;
    void this.fork?.stop();
    this.fork = null;
  }

  /** The room's fork, opened once; null when the player closed meanwhile (the fork that opened late is stopped). */
  private async openFork(): Promise<AudioFork | null> {
    if (this.fork) return this.fork;
    const fork = await this.media.forkAudioStart({ onFrame: () => undefined, reportStarts: true });
    if (this.closed) {
      void fork.stop();
      return null;
    }
    this.fork = fork;
    return fork;
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (!this.closed && this.queue.length) {
        const f = this.queue[0]!;
        const played = await this.playOne(f);
        this.queue.shift();
        this.done(f, played);
      }
    } catch {
      // the mixer went away (the room ends with it): what was queued is done, unplayed
      for (const f of this.queue.splice(0)) this.done(f, 0);
    } finally {
      this.running = false;
    }
  }

  /** Injects one file and waits until it has played out (or is stopped); resolves with the samples played. */
  private async playOne(f: QueuedFile): Promise<number> {
    const fork = await this.openFork();
    if (!fork || this.closed) return 0;
    try {
      return await injectFile(
        fork,
        f,
        (end) => (this.playing = { end }),
        () => this.closed,
      );
    } finally {
      this.playing = null;
    }
  }

  /** play-file-done: samples at the file's rate, as conference_file_close reports them. */
  private done(f: QueuedFile, samples: number): void {
    this.fire('play-file-done', [
      ['seconds', String(Math.floor(samples / f.rate))],
      ['milliseconds', String(Math.floor(samples / (f.rate / 1000)))],
      ['samples', String(samples)],
      ['File', f.file],
    ]);
  }
}
