/**
 * The playback queue of a bidirectional Twilio stream (`media`, `mark`, `clear` from the server), on
 * whichever side runs it: media-app for external media, control-api for GET .../media_stream. The
 * player (the sink: the call's fork) plays what it is handed in real time and runs dry when nothing
 * is; this queue keeps LEAD frames ahead of it, topped up at each `tick()` of the call's clock, and
 * knows from its clock (`now`, ms) when each frame handed over ends playing. A mark is echoed once the
 * audio queued before it has played, in the order the marks came; frames are not cut at a mark. Ticks
 * that come late and bunched (a stall of this process, the node's, or the link) do not count as audio
 * played: the player had run dry meanwhile, and only the lead is handed over for them. `clear` drops the
 * queue, asks the sink to drop what it holds ahead, and echoes every pending mark. Pure: the sink does
 * the I/O.
 */
export interface PlaybackSink {
  /** 20 ms (or less, at the end) of 16-bit LE PCM for the call. */
  play(pcm: Buffer): void;
  /** Echo this mark to the server. */
  mark(name: string): void;
  /** Drop the audio handed over and not yet played. */
  flush(): void;
}

/** Audio a server may queue: a minute (then the oldest goes, as for the other encapsulations). */
export const MAX_QUEUED_BYTES = 8000 * 2 * 60;
const FRAME = 320;
/** Bytes of PCM per ms (8 kHz, 16-bit). */
const BYTES_PER_MS = 16;
const FRAME_MS = FRAME / BYTES_PER_MS;
/** Frames kept ahead of the call's clock. */
export const PLAYBACK_LEAD = 3;

type Queued = { pcm: Buffer } | { mark: string };

export class TwilioPlayback {
  private readonly queue: Queued[] = [];
  private queuedBytes = 0;
  /** When what was handed over ends playing (ms on `now`); in the past when the player ran dry. */
  private playEnd = 0;
  /** Marks whose audio has been handed over, each echoed once its time has come, in order. */
  private readonly marksDue: { name: string; at: number }[] = [];

  constructor(
    private readonly sink: PlaybackSink,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Queues audio; it starts at once when the player has less than the lead, rather than at the next tick. */
  media(pcm: Buffer): void {
    if (!pcm.length) return;
    this.queue.push({ pcm });
    this.queuedBytes += pcm.length;
    this.dropOldest();
    this.topUp();
  }

  mark(name: string): void {
    this.queue.push({ mark: name });
    this.echoDue();
    // with no audio queued, the marks queued are due when what was handed over ends
    if (!this.queuedBytes) for (const q of this.queue.splice(0)) if ('mark' in q) this.due(q.mark, this.playEnd);
  }

  clear(): void {
    for (const d of this.marksDue.splice(0)) this.sink.mark(d.name);
    for (const q of this.queue) if ('mark' in q) this.sink.mark(q.mark);
    this.reset();
    this.sink.flush();
  }

  /** One 20 ms tick of the call's clock. */
  tick(): void {
    this.topUp();
  }

  /** Forgets everything, echoing nothing (the stream ended). */
  reset(): void {
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.marksDue.length = 0;
    this.playEnd = 0;
  }

  private echoDue(): void {
    const now = this.now();
    while (this.marksDue.length && this.marksDue[0]!.at <= now) this.sink.mark(this.marksDue.shift()!.name);
  }

  /** A mark is echoed at `at`, and never before one queued ahead of it. */
  private due(name: string, at: number): void {
    const last = this.marksDue.at(-1);
    if (!last && at <= this.now()) this.sink.mark(name);
    else this.marksDue.push({ name, at: Math.max(at, last?.at ?? at) });
  }

  /** Whole frames handed over and not yet played. */
  private ahead(): number {
    return Math.max(0, Math.floor((this.playEnd - this.now()) / FRAME_MS));
  }

  private topUp(): void {
    this.echoDue();
    for (let want = PLAYBACK_LEAD - this.ahead(); want > 0 && this.takeFrame(); want--);
  }

  /**
   * Hands the next 20 ms of audio to the sink (less at the end of what is queued); a mark within or right
   * after it is due when the audio before it ends. The player takes a frame per 20 ms whatever its length
   * (the engine pads a short one), so less than a frame is handed over only when the player is about to
   * run dry; until then more audio may come to fill it. False when nothing is handed over.
   */
  private takeFrame(): boolean {
    if (!this.queuedBytes || (this.queuedBytes < FRAME && this.ahead() > 0)) return false;
    const start = Math.max(this.playEnd, this.now());
    const out = Buffer.alloc(FRAME);
    let n = 0;
    while (this.queue.length) {
      const head = this.queue[0]!;
      if ('mark' in head) {
        this.queue.shift();
        this.due(head.mark, start + n / BYTES_PER_MS);
        continue;
      }
      if (n === FRAME) break;
      const take = Math.min(FRAME - n, head.pcm.length);
      head.pcm.copy(out, n, 0, take);
      n += take;
      this.queuedBytes -= take;
      if (take === head.pcm.length) this.queue.shift();
      else head.pcm = head.pcm.subarray(take);
    }
    this.sink.play(out.subarray(0, n));
    this.playEnd = start + FRAME_MS;
    return true;
  }

  private dropOldest(): void {
    while (this.queuedBytes > MAX_QUEUED_BYTES) {
      const i = this.queue.findIndex((q) => 'pcm' in q);
      const q = this.queue[i] as { pcm: Buffer };
      const cut = Math.min(q.pcm.length, this.queuedBytes - MAX_QUEUED_BYTES);
      this.queuedBytes -= cut;
      if (cut === q.pcm.length) this.queue.splice(i, 1);
      else q.pcm = q.pcm.subarray(cut);
    }
  }
}
