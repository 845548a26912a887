/**
 * The music of a hold of a member of a switch room, and its music on hold (README.md beside,
 * "Conferences"). The member's own
 * play would wait behind the `conference` application its channel runs, so the room holds it:
 * `conference <room> hold <member> <file>` (mod_conference's conference_api_sub_hold: the member is no
 * longer heard, and the file plays to it alone in place of the room: conference_member_play_file with
 * mux false), and since FreeSWITCH plays a member's file once, the hold's music loop
 * (media-app/call/media-state.ts) asks for it again at each play-file-member-done with
 * `conference <room> play <file> <member> nomux` (conference_api_sub_play mixes the file with the room
 * unless `nomux` follows the member). The member is held once the switch answered `+OK hold`: a hold
 * refused fails the play, and the next play asks for the hold again. Each play waits for the done of its
 * own file (member-done.ts: a late done of a stopped file does not end it). Held, the member is also
 * made deaf: it hears its file alone, or silence between files, never the room. The hold ends with
 * `conference <room> unhold <member>` (the member is heard again and hears the room; what plays to it
 * alone stops), then `undeaf <member>` unless the call wants it deaf. The music is an http(s) URL (a HoldUrl, a customer's moh_url), fetched once by media-app
 * through the egress policy into the directory shared with the switch (shared-prompts.ts), or the node's
 * own music (moh-source.ts) copied there; any other value is refused. The file is released when the hold
 * ends, the member leaves or the room ends.
 *
 * Each play is bounded as an announcement's step is (conference-say.ts): its file's length and
 * PLAY_SLACK_MS from the switch's reply, on the room's timers. A switch that took the play but never ends
 * it (FreeSWITCH answers `+OK hold` or `(play) Playing file` for a file it then cannot open, and sends no
 * play-file-member-done) fails the play with MusicTimeout there: the music failed, as a fetch that
 * failed, so the call's loop gives way to the node's music or logs it (media-app/call/hold-music.ts),
 * never a held member in silence with nothing told.
 *
 * Music on hold (the `moh` kind: POST /calls/{id}/moh of a member) is the same file played to the member
 * alone in place of the room, `conference <room> play <file> <member> nomux` at each
 * play-file-member-done, with no hold: the room still hears the member, as on the embedded engine (its
 * prompt replaces the mix the leg hears, its audio still mixed). A member the room held before (held,
 * then unheld with music on hold still on) is unheld first; music on hold that stops is `stop current
 * <member>`.
 */
import type { PlayResult } from '../../../media-engine';
import type { MusicKind } from '../endpoint';
import { isNodeMusic } from '../../kit/moh-source';
import { PLAY_SLACK_MS, PLAYING_TO_MEMBER, type MemberSayRoom } from './conference-say';
import { eslArg } from './esl-arg';
import { playedToMember, type MemberDone, type MemberWait } from './member-done';
import type { HeldPrompt, SharedPrompts } from './shared-prompts';
import { NOT_PLAYED, type MusicPort } from './leg-music';
import type { LinkTimers } from './switch-link';

/** The switch's reply to hold: conference_api_sub_hold's `+OK hold <id>`. */
const HELD = /^(\+OK )?hold \d+/;
/** The switch's reply to unhold: conference_api_sub_unhold's `+OK unhold <id>`. */
const UNHELD = /^(\+OK )?unhold \d+/;
/** The switch's replies to deaf and undeaf: conference_api_sub_deaf's `+OK deaf <id>`, undeaf's `+OK undeaf <id>`. */
const DEAFENED = /^(\+OK )?deaf \d+/;
const UNDEAFENED = /^(\+OK )?undeaf \d+/;
/** The switch's reply to `stop current <member>`: conference_api_sub_stop's `Stopped <n> files.` */
const STOPPED = /^(\+OK )?Stopped \d+ files?\./;

const isUrl = (s: string) => /^https?:\/\//i.test(s);

/** A play of the music the switch took but did not end within its bound (its file's length and PLAY_SLACK_MS). */
export class MusicTimeout extends Error {
  constructor(
    readonly file: string,
    readonly ms: number,
  ) {
    super(`the switch did not end the hold music ${file} (no play-file-member-done) within ${ms} ms`);
    this.name = 'MusicTimeout';
  }
}

/**
 * The room's hold (and music on hold) of one member, made by the room (FsmrfMix) and lent to the member's leg as its music
 * port (leg-music.ts) while the member is in: the leg asks, the room closes it.
 */
export class MemberHold implements MusicPort {
  /** the member is held on the switch (hold sent, no unhold since) */
  private held = false;
  /** the URL fetched for the switch while the hold lasts */
  private prompt: { url: string; held: Promise<HeldPrompt> } | null = null;
  /** ends the wait for the current play (its file done, the member gone, the hold ended) */
  private settle: (() => void) | null = null;
  private closed = false;
  /** counts the hold's ends: a play whose fetch outlived one sends nothing */
  private ends = 0;
  /** resolves once the last `hold` sent has its reply, and its `deaf` (either way) */
  private holdSent: Promise<void> = Promise.resolve();
  /** the hold made the member deaf (deaf sent and answered, no undeaf since) */
  private deaf = false;
  /** music on hold files playing to the member (sent, their done not seen) */
  private mohPlays = 0;

  constructor(
    private readonly room: MemberSayRoom,
    /** where each play's bound is armed (the room's: backend.ts's, or a test's virtual ones) */
    private readonly timers: LinkTimers,
    /** where a URL is fetched for the switch (null: a URL is refused) */
    private readonly prompts: SharedPrompts | null,
    /** the call wants its member deaf whatever the hold (its own or the room's `out` mute): the hold's end leaves it deaf */
    private readonly deafWanted: () => boolean = () => false,
  ) {}

  /**
   * Plays `music` to the member once as `kind` says: a hold's (held first, the first time), or music on
   * hold (unheld first when the room held it). Resolves at its play-file-member-done, or `interrupted`
   * when the music stopped, the hold ended, the member left or the room ended. Rejects when the switch
   * refuses the hold (its reply is not `+OK hold`): the member is not held then, and the next play asks
   * for the hold again. Rejects with MusicTimeout when the switch took the play but did not end it
   * within the file's length and PLAY_SLACK_MS.
   */
  async play(music: string, kind: MusicKind = 'hold'): Promise<PlayResult> {
    const id = this.room.memberId();
    const ends = this.ends;
    if (this.closed || id === undefined || !this.room.conn()) return NOT_PLAYED;
    if (kind === 'moh') await this.unhold();
    const prompt = await this.fetched(music);
    const file = eslArg('hold music file', prompt.path);
    if (ends !== this.ends) return NOT_PLAYED;
    const started = Date.now();
    const endWith = (end: () => void) => (this.settle = end);
    const bound = this.bound(file, prompt.durationMs + PLAY_SLACK_MS);
    const again = { id, command: `play ${file} ${id} nomux`, ok: PLAYING_TO_MEMBER, file, endWith, bound };
    let playing: Promise<MemberDone>;
    if (kind === 'moh') {
      this.mohPlays++;
      playing = playedToMember(this.room, again).finally(() => this.mohPlays--);
    } else playing = this.held ? playedToMember(this.room, again) : this.holding(again, `hold ${id} ${file}`);
    const how = await playing.finally(() => (this.settle = null));
    const ms = Date.now() - started;
    const interrupted = how !== 'done' || ends !== this.ends || (kind === 'hold' && !this.held);
    return { playbackSeconds: Math.floor(ms / 1000), playbackMilliseconds: ms, playbackLastOffsetPos: 0, interrupted };
  }

  /**
   * `hold <member> <file>`: the member is held once the switch said so (`+OK hold`), not before; then
   * `deaf <member>`: FreeSWITCH's held member with no file playing hears the room (its output path does
   * not look at the hold: between a file's end and the next `play`), a deaf one hears silence, and its
   * files still (conference_loop_output adds the member's file after the deaf silence).
   */
  private async holding(w: MemberWait, command: string): Promise<MemberDone> {
    const id = w.id;
    let answered!: () => void;
    this.holdSent = new Promise<void>((resolve) => (answered = resolve));
    const sent = async () => {
      try {
        this.held = !this.closed;
        if (!this.held) return;
        await this.room.command(`deaf ${id}`, DEAFENED);
        this.deaf = true;
      } finally {
        answered();
      }
    };
    try {
      return await playedToMember(this.room, { ...w, command, ok: HELD, sent });
    } finally {
      answered();
    }
  }

  /**
   * The music stops, the hold stays (a change of music or of its kind, a barge-in, a flow's abort): the
   * play waiting resolves interrupted, a play whose fetch is still running sends nothing, and the file
   * playing to the member stops (`stop current <member>`, while held or playing music on hold). A held
   * member is still not heard by the room; only end (`unhold`) ends the hold.
   */
  async stop(): Promise<void> {
    const playing = this.held || this.mohPlays > 0;
    this.ends++;
    this.settle?.();
    const id = this.room.memberId();
    if (playing && id !== undefined && !this.closed) await this.room.command(`stop current ${id}`, STOPPED);
  }

  /** The music is over: `unhold <member>` when held (heard again, hearing the room), the play waiting resolves, its URL released. */
  async end(): Promise<void> {
    this.ends++;
    this.settle?.();
    this.release();
    await this.unhold();
  }

  /** `unhold <member>` when the room holds it, then `undeaf` unless the call wants it deaf. */
  private async unhold(): Promise<void> {
    // a hold in flight: its reply tells whether there is a hold to end
    await this.holdSent;
    if (!this.held) return;
    this.held = false;
    const deaf = this.deaf;
    this.deaf = false;
    const id = this.room.memberId();
    if (id === undefined || this.closed) return;
    await this.room.command(`unhold ${id}`, UNHELD);
    if (deaf && !this.deafWanted()) await this.room.command(`undeaf ${id}`, UNDEAFENED);
  }

  /** A play's bound (member-done.ts): armed once the switch took it, cleared when its wait ends either way; fails it with MusicTimeout. */
  private bound(file: string, ms: number): NonNullable<MemberWait['bound']> {
    return (fail) => {
      const t = this.timers.set(ms, () => fail(new MusicTimeout(file, ms)));
      return () => this.timers.clear(t);
    };
  }

  /** A member of the room gets its music whenever asked (music asked while it joins is refused by its leg's own port). */
  refusal(): null {
    return null;
  }

  /** The member left or the room ended (the room's call): nothing more is sent, the play waiting resolves, the URL released. */
  close(): void {
    this.ends++;
    this.closed = true;
    this.held = false;
    this.deaf = false;
    this.settle?.();
    this.release();
  }

  /** `music` (a URL, or the node's own music) put in the shared directory once for the hold; other music replaces it. */
  private async fetched(music: string): Promise<HeldPrompt> {
    if (!this.prompts) throw new Error("hold music of a room's member needs the directory shared with the switch (FsmrfBackend.promptsIn)");
    const url = music;
    if (this.prompt?.url !== url) {
      this.release();
      const held = this.shared(this.prompts, url);
      this.prompt = { url, held };
      // a fetch that failed is the play's error; nothing to release
      held.catch(() => undefined);
    }
    const p = this.prompt;
    try {
      return await p.held;
    } catch (err) {
      if (this.prompt === p) this.prompt = null;
      throw err;
    }
  }

  /** A URL fetched through egress into the shared directory, or the node's own music copied there; any other file is refused. */
  private async shared(prompts: SharedPrompts, music: string): Promise<HeldPrompt> {
    if (isUrl(music)) return prompts.hold(music);
    if (isNodeMusic(music)) return prompts.holdNodeFile(music);
    throw new Error(`hold music of a room's member must be an http(s) URL or the node's own music (got ${JSON.stringify(music.slice(0, 80))})`);
  }

  private release(): void {
    const p = this.prompt;
    this.prompt = null;
    p?.held.then(
      (h) => h.release(),
      () => undefined,
    );
  }
}
