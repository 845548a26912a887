/**
 * The wait for one thing the room plays to one member (conference-say.ts: an announcement's step;
 * member-hold.ts: a loop of a hold's music): the command is sent, then the wait ends at that member's
 * play-file-member-done for that file, its del-member, the control connection's end, or the caller's end.
 *
 * FreeSWITCH queues a member's files (conference_member_play_file's fnode list) and fires
 * play-file-member-done from conference_file_close with `File` set to the path it played, also for a file
 * stopped (unhold's conference_member_stop_file, a `stop`): that event can come after the next command
 * was sent. So the wait takes only the done of its own file, the `File` header equal to the path sent.
 * A spoken node (saymember) gets no done at all on FreeSWITCH (conference_member_add_file_data closes,
 * and so reports, only a node whose type is not NODE_TYPE_SPEECH): what is waited for here is a file.
 */
import type { EslEvent } from 'drachtio-fsmrf';
import type { MemberSayRoom } from './conference-say';

/** How a member's wait ended: its file's done, or the member (del-member) or the connection is gone, or the caller ended it. */
export type MemberDone = 'done' | 'gone' | 'ended';

/** What `playedToMember` waits for. */
export interface MemberWait {
  /** the member's id on the switch */
  id: number;
  /** `conference <room> <command>`, answered as `ok` */
  command: string;
  ok: RegExp;
  /** the path the command plays (the done event's File) */
  file: string;
  /** armed once the switch took the command, cleared when the wait ends; its rejection is the wait's */
  bound?: (fail: (e: Error) => void) => () => void;
  /** called once the switch took the command (its reply matched `ok`), before the wait; its rejection is the wait's */
  sent?: () => void | Promise<void>;
  /** the caller's own end of the wait (a hold's stop): called with the function that ends it */
  endWith?: (end: () => void) => void;
}

/** Sends the command and waits for the member's done of its file (MemberDone); rejects when the command is refused or the bound fails it. */
export async function playedToMember(room: MemberSayRoom, w: MemberWait): Promise<MemberDone> {
  const conn = room.conn();
  if (!conn) return 'gone';
  let settle!: (how: MemberDone) => void;
  let fail!: (e: Error) => void;
  const done = new Promise<MemberDone>((resolve, reject) => ((settle = resolve), (fail = reject)));
  const onEvent = (evt: EslEvent) => {
    if (evt.getHeader('Member-ID') !== String(w.id)) return;
    const action = evt.getHeader('Action');
    if (action === 'del-member') settle('gone');
    else if (action === 'play-file-member-done' && evt.getHeader('File') === w.file) settle('done');
  };
  const onEnd = () => settle('gone');
  conn.on('esl::event::CUSTOM::*', onEvent);
  conn.once('esl::end', onEnd);
  w.endWith?.(() => settle('ended'));
  let unbound: (() => void) | null = null;
  try {
    await room.command(w.command, w.ok);
    await w.sent?.();
    unbound = w.bound?.(fail) ?? null;
    return await done;
  } finally {
    unbound?.();
    conn.off('esl::event::CUSTOM::*', onEvent);
    conn.off('esl::end', onEnd);
  }
}
