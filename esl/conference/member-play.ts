/**
 * A file played to one member (mod_conference's conference_member_play_file): `play <file> <id> [nomux]`
 * and the file of `hold <id> <file>`. As FreeSWITCH's conference_member_add_file_data writes it into the
 * member's output: a file played `mux` (play's default) is added to what the member hears of the room,
 * one `nomux` (play's nomux, hold's file) is heard in place of the room while it plays. A deaf member
 * (room.ts setHear: the mixer gives it silence) hears the file alone either way; a held member with no
 * file playing hears the room, as on FreeSWITCH (the mixer's output path does not look at the hold).
 * Each file ends with play-file-member-done, its File the path as the command named it, also when it
 * was stopped (unhold's conference_member_stop_file, the member leaving).
 *
 * Here: `nomux` is the member's endpoint's own play (a prompt replaces what the leg sends); `mux` is
 * injected through an audio fork of the member's endpoint (a fork's injected audio is added on top of
 * what the leg sends: the room's mix), timed as the room's own files are (playback.ts injectFile).
 */
import { injectFile, type QueuedFile } from './playback';
import type { ConferenceRoom, Member } from './room';

/** The file to the member, mixed with the room or in its place; play-file-member-done when it has played or was stopped. */
export async function playToMember(room: ConferenceRoom, m: Member, f: QueuedFile, mux: boolean): Promise<void> {
  const ms = await room.playingTo(m, async () => (mux ? mixToMember(room, m, f) : (await m.channel.endpoint.play(f.path)).playbackMilliseconds));
  const samples = Math.round((ms * f.rate) / 1000);
  room.fireMember('play-file-member-done', m, [
    ['seconds', String(Math.floor(samples / f.rate))],
    ['milliseconds', String(Math.floor(samples / (f.rate / 1000)))],
    ['samples', String(samples)],
    ['File', f.file],
  ]);
}

/**
 * Injects the file into what the member hears, through a fork of its endpoint opened for this file and
 * stopped after it; resolves with the milliseconds played. Its stop (Member.mixed, room.ts mixingTo: unhold, the member
 * leaving) ends it at once, also while the fork opens or before its first frame went out.
 */
async function mixToMember(room: ConferenceRoom, m: Member, f: QueuedFile): Promise<number> {
  let stopped = false;
  let end: (() => void) | null = null;
  let clear: (() => void) | null = null;
  const stop = () => {
    stopped = true;
    clear?.();
    end?.();
  };
  return room.mixingTo(m, stop, async () => {
    const fork = await m.channel.endpoint.forkAudioStart({ mix: 'out', onFrame: () => undefined, reportStarts: true });
    try {
      if (stopped) return 0;
      clear = () => void fork.clearInjected().catch(() => undefined);
      const samples = await injectFile(
        fork,
        f,
        (e) => (end = e),
        () => stopped,
      );
      return (samples * 1000) / f.rate;
    } finally {
      await fork.stop().catch(() => undefined);
    }
  });
}
