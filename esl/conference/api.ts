/**
 * The `conference` API command (mod_conference's conference_api_main_real and its sub-commands) over
 * the switch's rooms, each reply as mod_conference writes it (conference_api.c): `-ERR Conference <name>
 * not found`, member targets (`<id>|all|last|non_moderator`, `-ERR Non-Existant ID <id>`), list, count,
 * play, saymember, stop, mute/unmute, deaf/undeaf, hold/unhold, kick, hup, relate (relate.ts), lock/unlock,
 * get/set, recording start|stop|check|pause|resume (and record/norecord/pause/resume/chkrecord). A sub-command not served answers as an
 * unknown one does; a wrong use prints the command's syntax line, as FreeSWITCH does.
 */
import type { ApiContext } from '../api';
import { expandVariables } from '../expand';
import { ENERGY_LEVEL } from './events';
import { playToMember } from './member-play';
import { readRoomFile, type RoomFileRefusal } from './playback';
import { relate } from './relate';
import type { ConferenceRoom, Member } from './room';
import type { ConferenceRooms } from './rooms';

/** A sub-command on the room's arguments (argv[0] the room's name, argv[1] the sub-command); null prints its syntax. */
type RoomCommand = (room: ConferenceRoom, argv: string[], rooms: ConferenceRooms) => string | null;
/** A sub-command on one member (CONF_API_SUB_MEMBER_TARGET); `arg` is the word after the target. */
type MemberCommand = (room: ConferenceRoom, m: Member, arg: string | undefined, rooms: ConferenceRooms) => string;

/** conference_api_sub_commands' syntax text of each command served (`<pcommand> <psyntax>`, no newline). */
const SYNTAX: Record<string, string> = {
  count: 'count ',
  list: 'list [delim <string>]|[count]',
  play: 'play <file_path> [async|<member_id> [nomux]]',
  saymember: 'saymember <member_id> <text>',
  stop: 'stop <[current|all|async|last]> [<member_id>]',
  kick: 'kick <[member_id|all|last|non_moderator]> [<optional sound file>]',
  hup: 'hup <[member_id|all|last|non_moderator]>',
  mute: 'mute <[member_id|all]|last|non_moderator> [<quiet>]',
  unmute: 'unmute <[member_id|all]|last|non_moderator> [<quiet>]',
  deaf: 'deaf <[member_id|all]|last|non_moderator>',
  undeaf: 'undeaf <[member_id|all]|last|non_moderator>',
  hold: 'hold <[member_id|all]|last|non_moderator> [file]',
  unhold: 'unhold <[member_id|all]|last|non_moderator>',
  relate: 'relate <member_id>[,<member_id>] <other_member_id>[,<other_member_id>] [nospeak|nohear|clear]',
  lock: 'lock ',
  unlock: 'unlock ',
  record: 'record <filename>',
  chkrecord: 'chkrecord <confname>',
  norecord: 'norecord <[filename|all]>',
  pause: 'pause <filename>',
  resume: 'resume <filename>',
  recording: 'recording [start|stop|check|pause|resume] [<filename>|all]',
  get: 'get <parameter-name>',
  set: 'set <max_members|sound_prefix|caller_id_name|caller_id_number|endconference_grace_time> <value>',
};

/** C's atoi: the leading digits (after a sign), 0 when none. */
const atoi = (s: string | undefined) => Number.parseInt(/^\s*[+-]?\d+/.exec(s ?? '')?.[0] ?? '0', 10) || 0;

const report = (rooms: ConferenceRooms) => (e: unknown) => rooms.host.failed(e instanceof Error ? e : new Error(String(e)));

const MEMBER_COMMANDS: Record<string, MemberCommand> = {
  mute: (room, m, _a, rooms) => (void room.setSpeak(m, false).catch(report(rooms)), `+OK mute ${m.id}\n`),
  unmute: (room, m, _a, rooms) => (void room.setSpeak(m, true).catch(report(rooms)), `+OK unmute ${m.id}\n`),
  deaf: (room, m, _a, rooms) => (void room.setHear(m, false).catch(report(rooms)), `+OK deaf ${m.id}\n`),
  undeaf: (room, m, _a, rooms) => (void room.setHear(m, true).catch(report(rooms)), `+OK undeaf ${m.id}\n`),
  hold: (room, m, file, rooms) => holdMember(room, m, file, rooms),
  unhold: (room, m, _a, rooms) => (void room.setHold(m, false).catch(report(rooms)), `+OK unhold ${m.id}\n`),
  // the optional kick sound is not played: the member leaves at once
  kick: (room, m) => (room.remove(m, 'kicked'), `+OK kicked ${m.id}\n`),
  hup: (room, m) => (room.remove(m, 'hup'), `+OK hup ${m.id}\n`),
};

/**
 * hold <target> [file] (conference_api_sub_hold): the member is held (room.ts setHold); the file, when
 * given, plays to it alone in place of the room (conference_member_play_file nomux: member-play.ts), once, then
 * play-file-member-done; a file this switch cannot read is not played (FreeSWITCH logs it), the hold stands.
 */
function holdMember(room: ConferenceRoom, m: Member, file: string | undefined, rooms: ConferenceRooms): string {
  void room.setHold(m, true).catch(report(rooms));
  const f = file ? readRoomFile(file, room.soundPrefix, room.soundsDir) : null;
  if (f && typeof f !== 'string') void playToMember(room, m, f, false).catch(report(rooms));
  return `+OK hold ${m.id}\n`;
}

/** The member a target names: a number, or `var=value` (a channel variable of the member's channel). */
function memberBy(room: ConferenceRoom, target: string): Member | undefined {
  const id = atoi(target);
  if (id) return room.members.get(id);
  const eq = target.indexOf('=');
  if (eq < 0) return undefined;
  const [name, value] = [target.slice(0, eq), target.slice(eq + 1)];
  return [...room.members.values()].find((m) => m.channel.variables.get(name) === value);
}

/** conference_api_dispatch's CONF_API_SUB_MEMBER_TARGET: one member, all, non_moderator, or last (the highest id). */
function memberTarget(room: ConferenceRoom, argv: string[], name: string, fn: MemberCommand, rooms: ConferenceRooms): string {
  const target = argv[2];
  const arg = argv[3];
  const id = atoi(target);
  const word = id ? '' : (target ?? '').toLowerCase();
  if (word === 'all' || word === 'non_moderator') {
    let out = '';
    for (const m of [...room.members.values()]) {
      if (word === 'non_moderator' && m.moderator) out += `Skipping moderator (member id ${m.id}).\n`;
      else out += fn(room, m, arg, rooms);
    }
    return out;
  }
  if (word === 'last') {
    const last = [...room.members.values()].reduce<Member | null>((a, m) => (a === null || m.id > a.id ? m : a), null);
    return last ? fn(room, last, arg, rooms) : '';
  }
  if (id) {
    const m = room.members.get(id);
    return m ? fn(room, m, arg, rooms) : `-ERR Non-Existant ID ${id}\n`;
  }
  if (target?.includes('=')) {
    const m = memberBy(room, target);
    return m ? fn(room, m, arg, rooms) : '-ERR Non-Existant member\n';
  }
  return SYNTAX[name]!;
}

/** conference_list: `<id>;<channel name>;<uuid>;<caller id name>;<caller id number>;<flags>;<vol in>;<vol out>;<energy>`. */
function listMembers(room: ConferenceRoom, d: string): string {
  let out = '';
  for (const m of room.members.values()) {
    // a held member lists `hold` in place of hear, speak and talking (conference_list)
    const live = !m.held;
    const flags = [
      live && m.hear && 'hear',
      live && m.speak && 'speak',
      live && m.talking && 'talking',
      m.held && 'hold',
      room.floor === m.id && 'floor',
      m.moderator && 'moderator',
      m.ghost && 'ghost',
    ]
      .filter(Boolean)
      .join('|');
    const cid = m.channel.sip.fromUser;
    out += [m.id, m.channel.name, m.channel.uuid, cid, cid, flags, 0, 0, ENERGY_LEVEL].join(d) + '\n';
  }
  return out;
}

/** The list options after `list`: `delim <d>` (a quoted one unquoted), `count`; `pretty` and `summary` list as the default does. */
function listOf(room: ConferenceRoom, opts: string[]): string {
  if (opts[0]?.toLowerCase() === 'count') return `${room.size}`;
  let d = ';';
  if (opts[0]?.toLowerCase() === 'delim' && opts[1]) {
    d = opts[1];
    if (d.startsWith('"')) d = d.length > 1 ? d.slice(1).split('"')[0]! : ';';
  }
  return listMembers(room, d);
}

/** `conference list` without a room: each room's summary line, then its members. */
function listAll(rooms: ConferenceRooms, opts: string[]): string {
  const all = rooms.all();
  if (!all.length) return '+OK No active conferences.\n';
  if (opts[0]?.toLowerCase() === 'count') return all.map((r) => `${r.size}`).join('');
  let out = '';
  for (const r of all) {
    const n = r.size;
    const flags = [r.locked && 'locked', 'running', 'answered', 'dynamic', r.recordings.count > 0 && 'recording'].filter(Boolean).join('|');
    out += `+OK Conference ${r.name} (${n} member${n === 1 ? '' : 's'} rate: 8000${r.locked ? ' locked' : ''} flags: ${flags})\n`;
    if (opts[0]?.toLowerCase() !== 'summary') out += listOf(r, opts);
  }
  return out;
}

/** get: the parameters conference_api_sub_get reads. */
function getParam(room: ConferenceRoom, name: string): string | null {
  const values: Record<string, () => string> = {
    run_time: () => String(Math.floor((Date.now() - room.startedAt) / 1000)),
    count: () => String(room.size),
    count_ghosts: () => String(room.ghosts),
    max_members: () => String(room.maxMembers),
    rate: () => '8000',
    profile_name: () => room.profile,
    sound_prefix: () => room.soundPrefix,
    caller_id_name: () => room.callerIdName,
    caller_id_number: () => room.callerIdNumber,
    is_locked: () => (room.locked ? 'locked' : ''),
    endconference_grace_time: () => String(room.endconferenceGraceTime),
    uuid: () => room.uuid,
    wait_mod: () => '',
  };
  const v = Object.hasOwn(values, name.toLowerCase()) ? values[name.toLowerCase()] : undefined;
  return v ? v() : null;
}

/** set: prints the old value, then takes the new one (a negative number is refused). */
function setParam(room: ConferenceRoom, name: string, value: string): string | null {
  switch (name.toLowerCase()) {
    case 'max_members':
    case 'endconference_grace_time': {
      const n = atoi(value);
      if (n < 0) return null;
      const key = name.toLowerCase() === 'max_members' ? 'maxMembers' : 'endconferenceGraceTime';
      const old = String(room[key]);
      room[key] = n;
      return old;
    }
    case 'sound_prefix':
    case 'caller_id_name':
    case 'caller_id_number': {
      const key = ({ sound_prefix: 'soundPrefix', caller_id_name: 'callerIdName', caller_id_number: 'callerIdNumber' } as const)[name.toLowerCase() as 'sound_prefix'];
      const old = room[key];
      room[key] = value;
      return old;
    }
    default:
      return null;
  }
}

/** play <file> [async] to the room, or play <file> <member> [nomux] to one member (member-play.ts: mixed with the room unless nomux). */
function play(room: ConferenceRoom, argv: string[], rooms: ConferenceRooms): string | null {
  let argc = argv.length;
  const async = (argc === 4 && argv[3]!.toLowerCase() === 'async') || (argc === 5 && argv[4]!.toLowerCase() === 'async');
  if (async) argc--;
  const file = argv[2];
  if (argc === 3 && file) {
    const f = room.members.size ? readRoomFile(file, room.soundPrefix, room.soundsDir) : 'missing';
    if (typeof f === 'string') return playRefused(file, f);
    room.fireRoom('play-file', [
      ['File', file],
      ['Async', async ? 'true' : 'false'],
    ]);
    room.player.enqueue(f);
    return `(play) Playing file ${file}\n`;
  }
  if (argc < 4 || !file) return null;
  const m = memberBy(room, argv[3]!);
  if (!m) return `Member: ${atoi(argv[3]!)} not found.\n`;
  // conference_api_sub_play: mixed with the room unless `nomux` follows the member
  const mux = !(argc > 4 && argv[4]!.toLowerCase() === 'nomux');
  const f = readRoomFile(file, room.soundPrefix, room.soundsDir);
  if (typeof f === 'string') return playRefused(file, f);
  room.fireMember('play-file-member', m, [['File', file]]);
  void playToMember(room, m, f, mux).catch(report(rooms));
  return `(play) Playing file ${file} to member ${m.id}\n`;
}

/** What `play` answers for a file it does not play: FreeSWITCH's not found, or ours for a path outside the sounds directory. */
function playRefused(file: string, why: RoomFileRefusal): string {
  if (why === 'parent') return `-ERR (play) File: ${file} names a parent directory (..).\n`;
  if (why === 'outside') return `-ERR (play) File: ${file} is outside the sounds directory.\n`;
  return `(play) File: ${file} not found.\n`;
}

/**
 * stop <current|all|async> <member> (conference_member_stop_file): what plays to the member alone stops
 * (its own prompt and the files mixed into what it hears: member-play.ts), each file's
 * play-file-member-done follows. Its own files play on its channel's endpoint, whose queue stops whole:
 * `current` stops the queued ones too (FreeSWITCH then plays the next).
 */
function stopMemberFiles(room: ConferenceRoom, target: string, which: string, rooms: ConferenceRooms): string {
  const m = room.members.get(atoi(target));
  if (!m) return `Member: ${atoi(target)} not found.\n`;
  const playing = m.files;
  for (const stop of [...m.mixed]) stop();
  if (playing > m.mixed.size) void m.channel.endpoint.stopPlayback().catch(report(rooms));
  return `Stopped ${which === 'all' ? playing : Math.min(playing, 1)} files.\n`;
}

/** The conference profile's tts-engine and tts-voice (this switch has the one profile): what saymember speaks with. */
const ROOM_TTS = { engine: 'espeak-ng', voice: 'en-us' };

/**
 * saymember <id> <text> (conference_api_sub_saymember): the member hears the text spoken (conference_member_say;
 * in place of the room while it plays, the engine's rule), speak-text-member now, play-file-member-done
 * (no File: a speech node has none) when it has been spoken.
 */
function saymember(room: ConferenceRoom, argv: string[], rooms: ConferenceRooms): string | null {
  if (argv.length < 3) return null;
  const given = argv.slice(3).join(' ');
  if (!given) return '(saymember) No Text!\n';
  const m = room.members.get(atoi(argv[2]));
  if (!m) return `(saymember) Unknown Member ${atoi(argv[2])}!\n`;
  // expanded with the member's channel, as FreeSWITCH does (esl/expand.ts)
  const expanded = expandVariables(m.channel.variables, given, report(rooms));
  room.fireMember('speak-text-member', m, [['Text', expanded]]);
  // conference_member_say: a text that starts with #<voice># speaks the rest in that voice
  const voiced = /^#([^#]*)#/.exec(expanded);
  const [text, voice] = voiced ? [expanded.slice(voiced[0].length), voiced[1]!] : [expanded, ROOM_TTS.voice];
  void spokenTo(room, m, text, voice).catch(report(rooms));
  return '(saymember) OK\n';
}

/** Speaks `text` to the member, then play-file-member-done with what was spoken (nothing when the TTS failed: that is reported unless the member left). */
async function spokenTo(room: ConferenceRoom, m: Member, text: string, voice: string): Promise<void> {
  let ms = 0;
  let failed: Error | null = null;
  try {
    ms = (await room.playingTo(m, () => m.channel.endpoint.say(text, { provider: ROOM_TTS.engine, voice }))).playbackMilliseconds;
  } catch (err) {
    failed = err instanceof Error ? err : new Error(String(err));
  }
  const samples = Math.round(ms * 8);
  room.fireMember('play-file-member-done', m, [
    ['seconds', String(Math.floor(samples / 8000))],
    ['milliseconds', String(Math.floor(samples / 8))],
    ['samples', String(samples)],
  ]);
  if (failed !== null && !m.gone) throw failed;
}

/** record <path>: `+OK Record file <path>`, or the path in use. */
function recordStart(room: ConferenceRoom, p: string | undefined): string | null {
  if (!p) return null;
  if (room.recordings.has(p)) return `-ERR file [${p}] is already being used for recording.\n`;
  const refused = room.recordings.start(p);
  if (refused === 'parent') return `-ERR file [${p}] names a parent directory (..).\n`;
  if (refused === 'outside') return `-ERR file [${p}] is outside the recordings directory.\n`;
  return `+OK Record file ${p}\n`;
}

/** norecord <path|all>: a line per recording stopped, then the count. */
function recordStop(room: ConferenceRoom, which: string | undefined): string | null {
  if (!which) return null;
  const all = which.toLowerCase() === 'all';
  const stopped = room.recordings.stop(all ? null : which);
  let out = stopped.map((p) => `Stopped recording file ${p}\n`).join('');
  if (!stopped.length && !all) out += `-ERR non-existant recording '${which}'\n`;
  return `${out}+OK Stopped recording ${stopped.length} file${stopped.length === 1 ? '' : 's'}\n`;
}

/** pause|resume <path>: FreeSWITCH writes the +OK line first, then the -ERR when there is no such recording. */
function recordPause(room: ConferenceRoom, action: string, p: string | undefined): string | null {
  if (!p) return null;
  const on = action.toLowerCase() === 'pause';
  const out = `+OK ${on ? 'Pause' : 'Resume'} recording file ${p}\n`;
  return room.recordings.pause(p, on) ? out : `${out}-ERR non-existant recording '${p}'\n`;
}

function recordCheck(room: ConferenceRoom): string {
  const paths = room.recordings.paths();
  return paths.length ? paths.map((p) => `+OK Record file ${p}\n`).join('') : '-ERR Conference is not being recorded.\n';
}

/** recording start|stop|check|pause|resume [<path>|all] (conference_api_sub_recording's argument shuffle). */
function recording(room: ConferenceRoom, argv: string[]): string | null {
  const action = (argv[2] ?? '').toLowerCase();
  const target = argv[3] ?? (action === 'stop' || action === 'check' ? 'all' : undefined);
  if (target === undefined) return recordStart(room, argv[2]); // the old syntax: `recording <path>`
  if (action === 'start') return recordStart(room, target);
  if (action === 'stop') return recordStop(room, target);
  if (action === 'check') return recordCheck(room);
  if (action === 'pause' || action === 'resume') return recordPause(room, action, target);
  return null;
}

const ROOM_COMMANDS: Record<string, RoomCommand> = {
  list: (room, argv) => listOf(room, argv.slice(2)),
  count: (room) => `${room.size}`,
  play,
  saymember,
  relate,
  stop: (room, argv, rooms) => {
    const which = (argv[2] ?? 'all').toLowerCase();
    if (which !== 'current' && which !== 'all' && which !== 'async') return null;
    if (argv.length === 4) return stopMemberFiles(room, argv[3]!, which, rooms);
    return `+OK Stopped ${room.player.stop(which === 'current' ? 'current' : 'all')} files.\n`;
  },
  lock: (room, argv) => (room.setLocked(true), `+OK ${argv[0]} locked\n`),
  unlock: (room, argv) => (room.setLocked(false), `+OK ${argv[0]} unlocked\n`),
  get: (room, argv) => (argv.length === 3 ? getParam(room, argv[2]!) : null),
  set: (room, argv) => (argv.length === 4 ? setParam(room, argv[2]!, argv[3]!) : null),
  recording,
  record: (room, argv) => recordStart(room, argv[2]),
  norecord: (room, argv) => recordStop(room, argv[2]),
  pause: (room, argv) => recordPause(room, 'pause', argv[2]),
  resume: (room, argv) => recordPause(room, 'resume', argv[2]),
  chkrecord: (room) => recordCheck(room),
};

/** conference_api_dispatch: the sub-command on an existing room. */
function dispatch(room: ConferenceRoom, argv: string[], rooms: ConferenceRooms): string {
  const name = argv[1]!.toLowerCase();
  const member = Object.hasOwn(MEMBER_COMMANDS, name) ? MEMBER_COMMANDS[name] : undefined;
  if (member) return memberTarget(room, argv, name, member, rooms);
  const cmd = Object.hasOwn(ROOM_COMMANDS, name) ? ROOM_COMMANDS[name] : undefined;
  if (!cmd) return `-ERR Conference command '${argv[1]}' not found.\n`;
  return cmd(room, argv, rooms) ?? SYNTAX[name]!;
}

/** `conference` with no arguments or `help`: a line per command served. */
const help = () =>
  Object.values(SYNTAX)
    .map((s) => `<conf name> ${s}\n`)
    .join('');

/** `api conference <args>`. */
export function conferenceApi(args: string, ctx: ApiContext): string {
  const argv = args.split(' ').filter(Boolean);
  if (!argv.length) return help();
  const rooms = ctx.conferences;
  const room = rooms?.get(argv[0]!);
  if (room && rooms) return argv.length >= 2 ? dispatch(room, argv, rooms) : "Conference command, not specified.\nTry 'help'\n";
  const word = argv[0]!.toLowerCase();
  if (word === 'list') return rooms ? listAll(rooms, argv.slice(1)) : '+OK No active conferences.\n';
  if (word === 'count') return `${rooms?.all().length ?? 0}`;
  if (word === 'help' || word === 'commands') return help();
  return `-ERR Conference ${argv[0]} not found\n`;
}
