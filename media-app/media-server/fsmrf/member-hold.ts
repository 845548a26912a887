/**
 * The music of a hold of a member of a switch room (README.md beside, "Conferences"). The member's own
 * play would wait behind the `conference` application its channel runs, so the room holds it:
 * `conference <room> hold <member> <file>` (mod_conference's conference_api_sub_hold: the member is no
 * longer heard, and the file plays to it alone in place of the room), and since FreeSWITCH plays a
 * member's file once, the hold's music loop (media-app/call/media-state.ts) asks for it again at each
 * play-file-member-done with `conference <room> play <file> <member>`. The hold ends with
 * `conference <room> unhold <member>` (the member is heard again and hears the room; what plays to it
 * alone stops). A URL (a HoldUrl, a customer's moh_url) is fetched once by media-app into the directory
 * shared with the switch (shared-prompts.ts) and released when the hold ends, the member leaves or the
 * room ends; the node's own music is a file of the node, given to the switch at its path (as a leg's
 * own hold plays it: endpoint.ts).
 */
import type { EslEvent } from 'drachtio-fsmrf';
import type { PlayResult } from '../../../media-engine';
import { PLAYING_TO_MEMBER, type MemberSayRoom } from './conference-say';
import { eslArg } from './esl-arg';
import type { HeldPrompt, SharedPrompts } from './shared-prompts';

/** The switch's reply to hold: conference_api_sub_hold's `+OK hold <id>`. */
const HELD = /^(\+OK )?hold \d+/;
/** The switch's reply to unhold: conference_api_sub_unhold's `+OK unhold <id>`. */
const UNHELD = /^(\+OK )?unhold \d+/;
/** The switch's reply to `stop current <member>`: conference_api_sub_stop's `Stopped <n> files.` */
const STOPPED = /^(\+OK )?Stopped \d+ files?\./;

const NOT_PLAYED: PlayResult = { playbackSeconds: 0, playbackMilliseconds: 0, playbackLastOffsetPos: 0, interrupted: true };

const isUrl = (s: string) => /^https?:\/\//i.test(s);

export class MemberHold {
  /** the member is held on the switch (hold sent, no unhold since) */
  private held = false;
  /** the URL fetched for the switch while the hold lasts */
  private prompt: { url: string; held: Promise<HeldPrompt> } | null = null;
  /** ends the wait for the current play (its file done, the member gone, the hold ended) */
  private settle: (() => void) | null = null;
  private closed = false;
  /** counts the hold's ends: a play whose fetch outlived one sends nothing */
  private ends = 0;

  constructor(
    private readonly room: MemberSayRoom,
    /** where a URL is fetched for the switch (null: a URL is refused, the node's file plays) */
    private readonly prompts: SharedPrompts | null,
  ) {}

  /**
   * Plays `music` to the member once (held first, the first time): resolves at its
   * play-file-member-done, or `interrupted` when the hold ended, the member left or the room ended.
   */
  async play(music: string): Promise<PlayResult> {
    const id = this.room.memberId();
    const conn = this.room.conn();
    const ends = this.ends;
    if (this.closed || id === undefined || !conn) return NOT_PLAYED;
    const file = eslArg('hold music file', (await this.fetched(music)).path);
    if (ends !== this.ends) return NOT_PLAYED;
    const started = Date.now();
    let interrupted = false;
    const done = new Promise<void>((resolve) => (this.settle = resolve));
    const onEvent = (evt: EslEvent) => {
      const action = evt.getHeader('Action');
      if (evt.getHeader('Member-ID') !== String(id)) return;
      if (action === 'del-member') interrupted = true;
      if (action === 'play-file-member-done' || action === 'del-member') this.settle?.();
    };
    const onEnd = () => ((interrupted = true), this.settle?.());
    conn.on('esl::event::CUSTOM::*', onEvent);
    conn.once('esl::end', onEnd);
    try {
      if (this.held) await this.room.command(`play ${file} ${id}`, PLAYING_TO_MEMBER);
      else {
        this.held = true;
        await this.room.command(`hold ${id} ${file}`, HELD);
      }
      await done;
    } finally {
      this.settle = null;
      conn.off('esl::event::CUSTOM::*', onEvent);
      conn.off('esl::end', onEnd);
    }
    const ms = Date.now() - started;
    return { playbackSeconds: Math.floor(ms / 1000), playbackMilliseconds: ms, playbackLastOffsetPos: 0, interrupted: interrupted || !this.held || ends !== this.ends };
  }

  /**
   * The music stops, the hold stays (a change of music, a barge-in, a flow's abort): the play waiting
   * resolves interrupted, a play whose fetch is still running sends nothing, and the file playing to the
   * member stops (`stop current <member>`). The member is still not heard by the room; only stop
   * (`unhold`) ends the hold.
   */
  async stopMusic(): Promise<void> {
    this.ends++;
    this.settle?.();
    const id = this.room.memberId();
    if (this.held && id !== undefined && !this.closed) await this.room.command(`stop current ${id}`, STOPPED);
  }

  /** The hold ends: `unhold <member>` (heard again, hearing the room), the play waiting resolves, its URL released. */
  async stop(): Promise<void> {
    this.ends++;
    this.settle?.();
    this.release();
    if (!this.held) return;
    this.held = false;
    const id = this.room.memberId();
    if (id !== undefined && !this.closed) await this.room.command(`unhold ${id}`, UNHELD);
  }

  /** The member left or the room ended: nothing more is sent, the play waiting resolves, the URL released. */
  close(): void {
    this.ends++;
    this.closed = true;
    this.held = false;
    this.settle?.();
    this.release();
  }

  /** `music` (a URL, or the node's file) put in the shared directory once for the hold; other music replaces it. */
  private async fetched(music: string): Promise<HeldPrompt> {
    if (!this.prompts) throw new Error("hold music of a room's member needs the directory shared with the switch (FsmrfBackend.promptsIn)");
    const url = music;
    if (this.prompt?.url !== url) {
      this.release();
      const held = isUrl(url) ? this.prompts.hold(url) : this.prompts.holdNodeFile(url);
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

  private release(): void {
    const p = this.prompt;
    this.prompt = null;
    p?.held.then(
      (h) => h.release(),
      () => undefined,
    );
  }
}
