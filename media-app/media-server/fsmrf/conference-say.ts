/**
 * An AnnounceUrl's steps to one member of a room on the switch (conference.ts: FsmrfMix.announceTo). The
 * member's own prompt (its endpoint's play or say) would wait behind the `conference` application its
 * channel runs, so the room plays to it: each step is a file in the directory media-app shares with the
 * switch (shared-prompts.ts), played by `conference <room> play <path> <member id> nomux`
 * (conference_member_play_file: in place of the room while it plays, as a member's announcement on the
 * embedded engine, a play of its endpoint; without nomux FreeSWITCH mixes it with the room), and the step
 * is done at that member's play-file-member-done of that file (conference::maintenance, on the control
 * leg's connection, which fsmrf's Conference filters to the room), or when the member or the room is gone;
 * the file is removed once played.
 * - <Play>: media-app fetches the URL through its egress policy (the switch never fetches it).
 * - <Say>: media-app synthesises the text with the platform's voices, as the embedded engine's say does
 *   (the provider named, else espeak-ng; its voice or language), so any provider the platform has speaks.
 *   Not `conference <room> saymember`: FreeSWITCH 1.10 never ends a spoken node with play-file-member-done
 *   (mod_conference conference_member.c, conference_member_add_file_data: `if (member->fnode->type !=
 *   NODE_TYPE_SPEECH) { conference_file_close(...) }`, and conference_file_close is what fires it), so a
 *   saymember's end could not be told and each <Say> would end only at its bound.
 * Each step waits for the member's play-file-member-done of its own file (member-done.ts): a late done of
 * an earlier file does not end it.
 */
import type { EslConnection } from 'drachtio-fsmrf';
import type { AnnounceTarget } from '../conference';
import { MediaBackendUnsupported } from '../port';
import { eslArg } from './esl-arg';
import { playedToMember } from './member-done';
import type { HeldPrompt, SharedPrompts, SpeechRequest } from './shared-prompts';
import type { LinkTimers } from './switch-link';

/** The switch's reply to a member's play: conference_api_sub_play's `(play) Playing file <file> to member <id>` (with `+OK ` before it in some builds). */
export const PLAYING_TO_MEMBER = /^(\+OK )?\(play\) Playing file .* to member \d+/;

/** How long a member's file may take past its own length before its announcement fails. */
export const PLAY_SLACK_MS = 2000;

/** What MemberSay needs of its room. */
export interface MemberSayRoom {
  /** the member's id on the switch while it is in the room, else undefined */
  memberId(): number | undefined;
  /** `conference <room> <args>`; rejects with the switch's reply when it is not `ok` */
  command(args: string, ok: RegExp): Promise<void>;
  /** the control leg's connection (its CUSTOM events are the room's); null once it ended */
  conn(): EslConnection | null;
}

export class SayTimeout extends Error {
  constructor(readonly ms: number) {
    super(`the switch did not end the announcement (no play-file-member-done) within ${ms} ms`);
    this.name = 'SayTimeout';
  }
}

export class MemberSay implements AnnounceTarget {
  constructor(
    private readonly room: MemberSayRoom,
    private readonly ep: { readonly destroyed: boolean },
    private readonly timers: LinkTimers,
    /** where a <Play>'s URL is fetched and a <Say> synthesised for the switch (null: both refused) */
    private readonly prompts: SharedPrompts | null = null,
  ) {}

  get destroyed(): boolean {
    return this.ep.destroyed || this.room.memberId() === undefined;
  }

  /** Each URL in turn: fetched by media-app (shared-prompts.ts), played to the member by the room, its file released after. */
  async play(urls: string[]): Promise<void> {
    const prompts = this.shared('<Play>');
    for (const url of urls) {
      if (this.destroyed) return;
      await this.played(await prompts.hold(url));
    }
  }

  /**
   * `text` synthesised by media-app with the platform's voices (shared-prompts.ts holdSpeech: the engine's
   * TTS), played to the member by the room; resolves once the member has heard it (or left, or the room
   * ended), rejects with the TTS error or SayTimeout past its bound.
   */
  async say(text: string, opts: SpeechRequest = {}): Promise<void> {
    const prompts = this.shared('<Say>');
    if (this.destroyed) return;
    await this.played(await prompts.holdSpeech(text, opts));
  }

  private shared(verb: string): SharedPrompts {
    if (!this.prompts) throw new MediaBackendUnsupported('fsmrf', `a conference announcement's ${verb} without a directory shared with the switch (FsmrfBackend.promptsIn)`);
    return this.prompts;
  }

  /** The held file played to the member (nomux), bounded by its length and PLAY_SLACK_MS; released after, whatever the outcome. */
  private async played(prompt: HeldPrompt): Promise<void> {
    try {
      const file = eslArg('conference announcement file', prompt.path);
      await this.heard((id) => `play ${file} ${id} nomux`, file, prompt.durationMs + PLAY_SLACK_MS);
    } finally {
      prompt.release();
    }
  }

  /**
   * `conference <room> <args(member id)>`, then the member's play-file-member-done of `file` (member-done.ts),
   * or its del-member, the connection's end; rejects with SayTimeout when none comes within `boundMs` of
   * the switch's reply. Nothing is sent for a member no longer in the room.
   */
  private async heard(args: (id: number) => string, file: string, boundMs: number): Promise<void> {
    const id = this.room.memberId();
    if (id === undefined) return;
    // the bound: armed when the switch has taken the command, cleared when the step ends either way
    const bound = (fail: (e: Error) => void) => {
      const t = this.timers.set(boundMs, () => fail(new SayTimeout(boundMs)));
      return () => this.timers.clear(t);
    };
    await playedToMember(this.room, { id, command: args(id), ok: PLAYING_TO_MEMBER, file, bound });
  }
}
