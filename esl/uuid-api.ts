/**
 * The uuid_* API commands (mod_commands.c) on the switch's channels, each answering as FreeSWITCH
 * words it: `+OK…` on success, `-USAGE: <syntax>` for missing arguments, `-ERR No such channel!` for a
 * uuid no channel has (esl/README.md, "uuid API commands"). fsmrf's Endpoint sends uuid_bridge,
 * uuid_transfer (unbridge), uuid_dump and uuid_set_media_stats (getChannelVariables).
 */
import type { ApiContext } from './api';
import { separate } from './apps/args';
import { startSessionRecord, stopSessionRecord } from './apps/record';
import type { Bridgeable, Bridges } from './bridges';
import { causeFrom } from './causes';
import type { EventFactory } from './events';
import { mediaStatsVariables } from './media-stats';
import type { OutboundSession } from './listener';
import { serializeJson, serializePlain } from './wire';

/** What the uuid commands reach of the switch (ApiContext carries it). */
export interface UuidHost {
  /** the live channels by uuid */
  channels: ReadonlyMap<string, OutboundSession>;
  bridges: Bridges;
  events: EventFactory;
  /** a failure of ours (the engine's, not the client's input): reported (EslServer's 'failed') */
  failed(err: Error): void;
}

type UuidCommand = (args: string, ctx: ApiContext) => string | Promise<string>;

const NO_CHANNEL = '-ERR No such channel!\n';

/** uuid_bridge `<uuid> <other_uuid> [<fallback_uuid>]`: the two channels hear each other. */
async function uuidBridge(args: string, ctx: ApiContext): Promise<string> {
  const argv = separate(args, 4);
  if (argv.length < 2) return '-USAGE: <uuid> <other_uuid>\n';
  const live = (c: Bridgeable) => ctx.channels.get(c.channel.uuid) === c;
  const attempt = async (a: string, b: string | undefined): Promise<boolean> => {
    const x = ctx.channels.get(a);
    const y = b === undefined ? undefined : ctx.channels.get(b);
    if (!x || !y || x === y) return false;
    // the bridge interrupts what each channel plays, as FreeSWITCH's transfer into the bridge does
    await Promise.all([x.breakMedia(false), y.breakMedia(false)]);
    // false: a channel hung up meanwhile (FreeSWITCH's answer then too); anything else throws
    return ctx.bridges.bridge(x, y, live);
  };
  try {
    if (await attempt(argv[0]!, argv[1])) return `+OK ${argv[1]}\n`;
    if (argv[2] && (await attempt(argv[0]!, argv[2]))) return `+OK ${argv[2]}\n`;
  } catch (e) {
    // the engine failed on live channels: a fault of ours, reported; the client gets mod_commands' answer
    ctx.failed(e instanceof Error ? e : new Error(String(e)));
  }
  return '-ERR Invalid uuid\n';
}

/** The park application: out of any bridge, what it plays stopped, CHANNEL_PARK; sendmsg still drives it. */
async function park(call: OutboundSession, ctx: ApiContext): Promise<void> {
  await ctx.bridges.end(call);
  await call.breakMedia(false);
  call.fire('CHANNEL_PARK');
}

/**
 * uuid_transfer `<uuid> [-bleg|-both] <dest> [<dialplan>] [<context>]`: served for the inline dialplan's
 * `park` (fsmrf's unbridge: `<uuid> -both park inline`); this switch has no other dialplan, so any other
 * destination answers `-ERR` (FreeSWITCH's failed-transfer answer) and the channel stays as it is.
 */
async function uuidTransfer(args: string, ctx: ApiContext): Promise<string> {
  const usage = '-USAGE: <uuid> [-bleg|-both] <dest-exten> [<dialplan>] [<context>]\n';
  const argv = separate(args, 5);
  if (argv.length < 2) return usage;
  const target = ctx.channels.get(argv[0]!);
  if (!target) return NO_CHANNEL;
  const flag = argv[1]!.startsWith('-') ? argv[1]!.slice(1).toLowerCase() : null;
  const [dest, dialplan] = flag === null ? [argv[1], argv[2]] : [argv[2], argv[3]];
  if (!/^park:?$/.test(dest ?? '') || dialplan !== 'inline') return '-ERR\n';
  const partner = ctx.bridges.partnerOf(target.channel.uuid);
  const other = partner ? ctx.channels.get(partner.channel.uuid) : undefined;
  const parked = flag === 'bleg' && other ? [other] : flag === 'both' && other ? [target, other] : [target];
  for (const call of parked) await park(call, ctx);
  return '+OK\n';
}

/** uuid_dump `<uuid> [txt|plain|json]`: the channel as a CHANNEL_DATA event (its variables as variable_*). */
function uuidDump(args: string, ctx: ApiContext): string {
  const argv = separate(args, 2);
  if (!argv[0]) return '-USAGE: <uuid> [format]\n';
  const call = ctx.channels.get(argv[0]);
  if (!call) return NO_CHANNEL;
  const format = (argv[1] ?? 'txt').toLowerCase();
  const ev = call.channel.channelData(ctx.events);
  if (format === 'json') return serializeJson(ev);
  if (format === 'xml') return '-ERR xml is not supported\n';
  // switch_event_serialize: URL-encoded, except for `plain`, which brackets the raw values
  if (format === 'plain') return ev.headers.map(([k, v]) => `${k}: [${v}]\n`).join('') + '\n';
  return serializePlain(ev);
}

/** uuid_setvar `<uuid> <var> [value]`: without a value the variable is unset. */
function uuidSetvar(args: string, ctx: ApiContext): string {
  const argv = separate(args, 3);
  if (argv.length < 2) return '-USAGE: <uuid> <var> [value]\n';
  const call = ctx.channels.get(argv[0]!);
  if (!call) return NO_CHANNEL;
  if (argv[2] === undefined || argv[2] === '') call.channel.variables.delete(argv[1]!);
  else call.channel.variables.set(argv[1]!, argv[2]);
  return '+OK\n';
}

/** uuid_setvar_multi `<uuid> <var>=<value>;<var>=<value>…` (a pair without `=` unsets). */
function uuidSetvarMulti(args: string, ctx: ApiContext): string {
  const usage = '-USAGE: <uuid> <var>=<value>;<var>=<value>...\n';
  const sp = args.indexOf(' ');
  if (sp < 0) return usage;
  const call = ctx.channels.get(args.slice(0, sp));
  if (!call) return NO_CHANNEL + usage;
  let set = 0;
  let out = '';
  for (const pair of args
    .slice(sp + 1)
    .split(';')
    .slice(0, 64)) {
    const eq = pair.indexOf('=');
    const [name, value] = eq < 0 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
    if (!name) {
      out += '-ERR No variable specified\n';
      continue;
    }
    if (value) call.channel.variables.set(name, value);
    else call.channel.variables.delete(name);
    set++;
  }
  return set ? `${out}+OK\n` : out + usage;
}

/** uuid_getvar `<uuid> <var>`: the value, or `_undef_`. */
function uuidGetvar(args: string, ctx: ApiContext): string {
  const argv = separate(args, 4);
  if (argv.length < 2) return '-USAGE: <uuid> <var>\n';
  const call = ctx.channels.get(argv[0]!);
  if (!call) return NO_CHANNEL;
  return call.channel.variables.get(argv[1]!) ?? '_undef_';
}

/**
 * uuid_set_media_stats `<uuid>`: the rtp_audio_* variables FreeSWITCH's set_stats writes (for a following
 * uuid_dump), those the engine's counts give (media-stats.ts; esl/README.md lists them).
 */
async function uuidSetMediaStats(args: string, ctx: ApiContext): Promise<string> {
  const uuid = args.trim();
  if (!uuid) return '-USAGE: <uuid>\n';
  const call = ctx.channels.get(uuid);
  if (!call) return `-ERR No such channel ${uuid}!\n`;
  const stats = await call.channel.endpoint.getStats();
  for (const [name, value] of mediaStatsVariables(stats, call.channel.variables)) call.channel.variables.set(`rtp_audio_${name}`, value);
  return '+OK:\n';
}

/** uuid_kill `<uuid> [cause]`: hangs the channel up (a BYE) with the cause (switch_channel_str2cause). */
function uuidKill(args: string, ctx: ApiContext): string {
  const text = args.trim();
  if (!text) return '-USAGE: <uuid> [cause]\n';
  const sp = text.indexOf(' ');
  const call = ctx.channels.get(sp < 0 ? text : text.slice(0, sp));
  if (!call) return NO_CHANNEL;
  call.hangup(causeFrom(sp < 0 ? '' : text.slice(sp + 1)));
  return '+OK\n';
}

/** uuid_break `<uuid> [all] [both]`: stops what plays; `all` also drops the queued applications; `both` the partner's too. */
async function uuidBreak(args: string, ctx: ApiContext): Promise<string> {
  const text = args.trim();
  if (!text) return '-USAGE: <uuid> [all]\n';
  const sp = text.indexOf(' ');
  const call = ctx.channels.get(sp < 0 ? text : text.slice(0, sp));
  if (!call) return NO_CHANNEL;
  const flag = sp < 0 ? '' : text.slice(sp + 1);
  const all = flag.includes('all');
  const partner = flag.includes('both') ? ctx.bridges.partnerOf(call.channel.uuid) : undefined;
  const other = partner ? ctx.channels.get(partner.channel.uuid) : undefined;
  await Promise.all([call.breakMedia(all), other?.breakMedia(all)]);
  return '+OK\n';
}

/**
 * uuid_audio `<uuid> [start [read|write] [mute|level <level>]|stop]` (mod_commands' session_audio_function):
 * an API command, so it takes effect at once, even while an application runs on the channel (a sendmsg'd
 * set_mute waits behind it). `start <read|write> mute <n>`: n not 0 mutes that side, 0 unmutes it, as
 * switch_ivr_session_audio writes the same media bug set_mute does (so each undoes the other); `stop`
 * removes that bug, both sides unmuted. `level` (a gain) is not served: `-ERR`, never a silent +OK.
 */
async function uuidAudio(args: string, ctx: ApiContext): Promise<string> {
  const usage = '-USAGE: <uuid> [start [read|write] [mute|level <level>]|stop]\n';
  const argv = separate(args, 5);
  if (argv.length < 2) return usage;
  const call = ctx.channels.get(argv[0]!);
  if (!call) return NO_CHANNEL;
  const ep = call.channel.endpoint;
  const verb = argv[1]!.toLowerCase();
  if (verb === 'stop') {
    await ep.unmute('both');
    return '+OK\n';
  }
  const side = argv[2]?.toLowerCase();
  if (verb !== 'start' || argv.length < 5 || (side !== 'read' && side !== 'write')) return usage;
  const what = argv[3]!.toLowerCase();
  if (what === 'level') return '-ERR level is not supported\n';
  if (what !== 'mute') return usage;
  // atoi: a leading integer, else 0
  const level = Number.parseInt(argv[4]!, 10) || 0;
  const direction = side === 'read' ? 'in' : 'out';
  await (level !== 0 ? ep.mute(direction) : ep.unmute(direction));
  return '+OK\n';
}

/**
 * uuid_record `<uuid> [start|stop|mask|unmask] <path> [<limit>] [<recording_vars>]` (mod_commands'
 * session_record_function): record_session / stop_record_session as an API command, so it takes effect
 * at once even while an application runs on the channel (a sendmsg'd stop_record_session waits behind a
 * playing file). `start`: the recording armed (`<limit>` seconds, atoi; the variables are not read, as
 * record_session's are not); `stop <path|all>`: it ends with its RECORD_STOP, `-ERR Cannot stop record
 * session!` when none such runs. `mask`/`unmask` (silence written in its place) are not served: `-ERR`.
 */
async function uuidRecord(args: string, ctx: ApiContext): Promise<string> {
  const usage = '-USAGE: <uuid> [start|stop|mask|unmask] <path> [<limit>] [<recording_vars>]\n';
  const argv = separate(args, 5);
  if (argv.length < 3 || !argv[0] || !argv[1] || !argv[2]) return usage;
  const call = ctx.channels.get(argv[0]);
  if (!call) return '-ERR Cannot locate session!\n';
  const [action, file] = [argv[1].toLowerCase(), argv[2]];
  if (action === 'start') {
    // atoi: a leading integer, else 0 (no limit)
    const limit = Math.max(0, Number.parseInt(argv[3] ?? '', 10) || 0);
    // a file it cannot write, or the engine refusing the recorder (the leg going): the client is told
    const armed = await startSessionRecord(call, file, limit).catch(() => false);
    return armed ? '+OK Success\n' : '-ERR Cannot record session!\n';
  }
  if (action === 'stop') return (await stopSessionRecord(call.channel, file)) ? '+OK Success\n' : '-ERR Cannot stop record session!\n';
  if (action === 'mask' || action === 'unmask') return `-ERR ${action} is not supported\n`;
  return usage;
}

/** FreeSWITCH's digit length when `@<ms>` is absent (SWITCH_DEFAULT_DTMF_DURATION, 2000 samples at 8 kHz) */
const DTMF_DEFAULT_MS = 250;
/** its bounds (switch_core_min_dtmf_duration 400 samples; the engine's longest digit) */
const DTMF_MIN_MS = 50;
const DTMF_MAX_MS = 8000;

/**
 * uuid_send_dtmf `<uuid> <digits>[@<ms>]` (mod_commands, switch_core_session_send_dtmf_string): the
 * digits to the channel's far end, RFC 2833 when it negotiated telephone-event, else as in-band tones
 * (what this switch can send instead of FreeSWITCH's per-profile dtmf_type). Characters that are not
 * digits are skipped, as FreeSWITCH skips them; its `w`/`W` pauses are among them here (not served).
 */
async function uuidSendDtmf(args: string, ctx: ApiContext): Promise<string> {
  const argv = separate(args.trim(), 2);
  if (argv.length < 2 || !argv[0] || !argv[1]) return '-USAGE: <uuid> <dtmf_data>\n';
  const call = ctx.channels.get(argv[0]);
  if (!call) return '-ERR Cannot locate session!\n';
  const at = argv[1].indexOf('@');
  const digits = (at < 0 ? argv[1] : argv[1].slice(0, at)).replace(/[^0-9A-Da-d*#]/g, '').toUpperCase();
  const asked = at < 0 ? DTMF_DEFAULT_MS : Number.parseInt(argv[1].slice(at + 1), 10);
  const ms = Number.isFinite(asked) ? Math.min(DTMF_MAX_MS, Math.max(DTMF_MIN_MS, asked)) : DTMF_DEFAULT_MS;
  if (!digits) return '+OK Success\n';
  const ep = call.channel.endpoint;
  try {
    await ep.sendDtmf(digits, ms, ep.telephoneEvent ? 'rfc4733' : 'inband');
  } catch (e) {
    // the engine refused (too many digits waiting, the leg gone): the client is told, as a failure of its request
    return `-ERR ${e instanceof Error ? e.message : String(e)}\n`;
  }
  return '+OK Success\n';
}

export const UUID_COMMANDS: Readonly<Record<string, UuidCommand>> = {
  uuid_bridge: uuidBridge,
  uuid_transfer: uuidTransfer,
  uuid_dump: uuidDump,
  uuid_setvar: uuidSetvar,
  uuid_setvar_multi: uuidSetvarMulti,
  uuid_getvar: uuidGetvar,
  uuid_exists: (args, ctx) => (ctx.channels.has(args) ? 'true' : 'false'),
  uuid_set_media_stats: uuidSetMediaStats,
  uuid_kill: uuidKill,
  uuid_break: uuidBreak,
  uuid_audio: uuidAudio,
  uuid_record: uuidRecord,
  uuid_send_dtmf: uuidSendDtmf,
};
