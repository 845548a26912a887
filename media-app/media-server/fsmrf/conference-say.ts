/**
 * An AnnounceUrl's steps to one member of a room on the switch (conference.ts: FsmrfMix.announceTo). The
 * member's own prompt (its endpoint's say) would wait behind the `conference` application its channel
 * runs, so the room speaks to it: `conference <room> saymember <member id> <text>` (mod_conference's
 * conference_member_say, with the profile's TTS), done at that member's play-file-member-done
 * (conference::maintenance, on the control leg's connection, which fsmrf's Conference filters to the
 * room), or when the member or the room is gone. A <Say> in a language or voice of its own and a <Play>
 * are refused by name: saymember speaks with the room's one voice, and the switch plays a member files
 * of its sounds directory only, not the platform's URLs.
 */
import type { EslConnection, EslEvent } from 'drachtio-fsmrf';
import type { AnnounceTarget } from '../conference';
import { MediaBackendUnsupported } from '../port';
import { eslText } from './esl-arg';
import type { LinkTimers } from './switch-link';

/** The switch's reply to saymember: conference_api_sub_saymember's `(saymember) OK` (with `+OK ` before it in some builds). */
const SAID = /^(\+OK )?\(saymember\) OK/;

/** The language the room's TTS speaks (the switch's conference profile: en-US). */
const ROOM_LANGUAGE = /^en(-us)?$/i;

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
  ) {}

  get destroyed(): boolean {
    return this.ep.destroyed || this.room.memberId() === undefined;
  }

  play(): Promise<void> {
    return Promise.reject(new MediaBackendUnsupported('fsmrf', "a conference announcement's <Play> (the switch plays a member files of its sounds directory, not the platform's URLs)"));
  }

  /** Resolves once the member has heard `text` (or left, or the room ended); rejects with SayTimeout past sayBoundMs. */
  async say(text: string, opts: { language?: string; voice?: string; provider?: string } = {}): Promise<void> {
    if (opts.voice || opts.provider || (opts.language && !ROOM_LANGUAGE.test(opts.language)))
      throw new MediaBackendUnsupported('fsmrf', "a conference announcement's <Say> in a language or voice of its own (the switch's room speaks en-US with its profile's voice)");
    const id = this.room.memberId();
    const conn = this.room.conn();
    if (id === undefined || !conn) return;
    // conference_member_say takes a leading #<voice># as the voice: a customer's text never picks one
    const said = eslText('conference announcement text', text.startsWith('#') ? `, ${text}` : text);
    let settle!: () => void;
    let fail!: (e: Error) => void;
    const done = new Promise<void>((resolve, reject) => ((settle = resolve), (fail = reject)));
    // the say's bound: armed when the switch has taken the text, cleared when the say ends either way
    let bound: unknown = null;
    const onEvent = (evt: EslEvent) => {
      const action = evt.getHeader('Action');
      if (evt.getHeader('Member-ID') === String(id) && (action === 'play-file-member-done' || action === 'del-member')) settle();
    };
    const onEnd = () => settle();
    conn.on('esl::event::CUSTOM::*', onEvent);
    conn.once('esl::end', onEnd);
    try {
      await this.room.command(`saymember ${id} ${said}`, SAID);
      const ms = sayBoundMs(said);
      bound = this.timers.set(ms, () => fail(new SayTimeout(ms)));
      await done;
    } finally {
      if (bound !== null) this.timers.clear(bound);
      conn.off('esl::event::CUSTOM::*', onEvent);
      conn.off('esl::end', onEnd);
    }
  }
}
