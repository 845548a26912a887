/**
 * An AnnounceUrl's steps to one member of a room on the switch (conference.ts: FsmrfMix.announceTo). The
 * member's own prompt (its endpoint's play or say) would wait behind the `conference` application its
 * channel runs, so the room plays to it, and the step is done at that member's play-file-member-done
 * (conference::maintenance, on the control leg's connection, which fsmrf's Conference filters to the
 * room), or when the member or the room is gone:
 * - <Say>: `conference <room> saymember <member id> <text>` (mod_conference's conference_member_say, the
 *   profile's TTS); a language or voice of its own is saymember's `#<voice>#<text>` (the voice as the
 *   call's say gives it to `speak`: the voice, else the language in lower case). A provider other than
 *   the profile's engine is refused by name: the room speaks with its profile's engine only.
 * - <Play>: media-app fetches the URL through its egress policy into the directory it shares with the
 *   switch (shared-prompts.ts) and the room plays that file to the member, `conference <room> play
 *   <path> <member id> nomux` (conference_member_play_file: in place of the room while it plays, as a
 *   member's announcement on the embedded engine, a play of its endpoint; without nomux FreeSWITCH mixes
 *   it with the room); the file is removed once played. The switch never fetches the URL.
 * Each step waits for the member's play-file-member-done of its own file (member-done.ts): a late done of
 * an earlier file does not end it.
 */
import type { EslConnection } from 'drachtio-fsmrf';
import type { AnnounceTarget } from '../conference';
import { MediaBackendUnsupported } from '../port';
import { eslArg, eslText } from './esl-arg';
import { playedToMember } from './member-done';
import type { SharedPrompts } from './shared-prompts';
import type { LinkTimers } from './switch-link';

/** The switch's reply to saymember: conference_api_sub_saymember's `(saymember) OK` (with `+OK ` before it in some builds). */
const SAID = /^(\+OK )?\(saymember\) OK/;

/** The switch's reply to a member's play: conference_api_sub_play's `(play) Playing file <file> to member <id>` (with `+OK ` before it in some builds). */
export const PLAYING_TO_MEMBER = /^(\+OK )?\(play\) Playing file .* to member \d+/;

/** The language the room's TTS speaks (the switch's conference profile: en-US). */
const ROOM_LANGUAGE = /^en(-us)?$/i;

/** The room's TTS engine (the profile's tts-engine: espeak-ng, by mod_tts_commandline on a FreeSWITCH). */
const ROOM_ENGINE = 'espeak-ng';

/** A voice saymember may be given (`#<voice>#`): no `#`, space or shell character (tts_commandline quotes it, still). */
const VOICE = /^[A-Za-z0-9+_.-]{1,64}$/;

/** How long a member's file may take past its own length before its announcement fails. */
const PLAY_SLACK_MS = 2000;

/** What MemberSay needs of its room. */
export interface MemberSayRoom {
  /** the member's id on the switch while it is in the room, else undefined */
  memberId(): number | undefined;
  /** `conference <room> <args>`; rejects with the switch's reply when it is not `ok` */
  command(args: string, ok: RegExp): Promise<void>;
  /** the control leg's connection (its CUSTOM events are the room's); null once it ended */
  conn(): EslConnection | null;
}

/**
 * How long a member's announcement may take before it fails: 2 s, and 0.5 s a word (espeak-ng's default
 * speaks about 3 words a second). A switch that never sends play-file-member-done (a profile with no TTS
 * queues nothing) must not hold the announcement, and its AnnounceUrl's callback, for ever.
 */
export const sayBoundMs = (text: string): number => 2000 + 500 * text.split(/\s+/).filter(Boolean).length;

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
    /** where a <Play>'s URL is fetched for the switch (null: a <Play> is refused) */
    private readonly prompts: SharedPrompts | null = null,
  ) {}

  get destroyed(): boolean {
    return this.ep.destroyed || this.room.memberId() === undefined;
  }

  /** Each URL in turn: fetched by media-app (shared-prompts.ts), played to the member by the room, its file released after. */
  async play(urls: string[]): Promise<void> {
    if (!this.prompts) throw new MediaBackendUnsupported('fsmrf', "a conference announcement's <Play> without a directory shared with the switch (FsmrfBackend.promptsIn)");
    for (const url of urls) {
      if (this.destroyed) return;
      const prompt = await this.prompts.hold(url);
      try {
        const file = eslArg('conference announcement file', prompt.path);
        await this.heard((id) => `play ${file} ${id} nomux`, PLAYING_TO_MEMBER, file, prompt.durationMs + PLAY_SLACK_MS);
      } finally {
        prompt.release();
      }
    }
  }

  /** Resolves once the member has heard `text` (or left, or the room ended); rejects with SayTimeout past sayBoundMs. */
  async say(text: string, opts: { language?: string; voice?: string; provider?: string } = {}): Promise<void> {
    if (opts.provider && opts.provider !== ROOM_ENGINE)
      throw new MediaBackendUnsupported(
        'fsmrf',
        `a conference announcement's <Say> by a TTS provider of its own (${JSON.stringify(opts.provider.slice(0, 40))}: the switch's room speaks with its profile's engine)`,
      );
    const voice = opts.voice ?? (opts.language && !ROOM_LANGUAGE.test(opts.language) ? opts.language.toLowerCase() : undefined);
    if (voice !== undefined && !VOICE.test(voice)) throw new Error(`a conference announcement's voice must be 1-64 of A-Z a-z 0-9 + _ . - (got ${JSON.stringify(voice.slice(0, 40))})`);
    // conference_member_say takes a leading #<voice># as the voice: a customer's text never picks one
    const said = eslText('conference announcement text', voice !== undefined ? `#${voice}#${text}` : text.startsWith('#') ? `, ${text}` : text);
    await this.heard((id) => `saymember ${id} ${said}`, SAID, null, sayBoundMs(said));
  }

  /**
   * `conference <room> <args(member id)>`, then the member's play-file-member-done of `file` (member-done.ts:
   * null for speech), or its del-member, the connection's end; rejects with SayTimeout when none comes
   * within `boundMs` of the switch's reply. Nothing is sent for a member no longer in the room.
   */
  private async heard(args: (id: number) => string, ok: RegExp, file: string | null, boundMs: number): Promise<void> {
    const id = this.room.memberId();
    if (id === undefined) return;
    // the bound: armed when the switch has taken the command, cleared when the step ends either way
    const bound = (fail: (e: Error) => void) => {
      const t = this.timers.set(boundMs, () => fail(new SayTimeout(boundMs)));
      return () => this.timers.clear(t);
    };
    await playedToMember(this.room, { id, command: args(id), ok, file, bound });
  }
}
