/**
 * The API commands (`api <command> [args]`, `bgapi …`) this switch answers, each output as
 * FreeSWITCH's module writes it (esl/README.md, "API commands"). A command not listed here answers
 * `-ERR <command> Command not found!\n`, FreeSWITCH's answer for a command no module registered.
 */
import { conferenceApi } from './conference/api';
import type { ConferenceRooms } from './conference/rooms';
import { uptimeText, type SwitchIdentity } from './events';
import type { DubTracks } from './dub';
import type { AudioForks } from './fork/forks';
import type { SessionCounts } from './sessions';
import { UUID_COMMANDS, type UuidHost } from './uuid-api';

/** The one SIP profile the switch has: its name and the IPv4 address:port its SIP face uses. */
export interface SipProfile {
  name: string;
  address: string;
}

/** What the API commands read: identity, uptime, session counts, the SIP profile, the host's idle CPU. */
export interface ApiContext extends UuidHost {
  id: SwitchIdentity;
  startedAt: number;
  now: () => number;
  sessions: SessionCounts;
  profile: SipProfile;
  idleCpu: () => number;
  /** uuid_audio_fork's bugs (fork/forks.ts) */
  forks: AudioForks;
  /** uuid_dub's tracks (dub.ts) */
  dub: DubTracks;
  /** the conferences (set by the SIP face, which makes them): the `conference` command */
  conferences?: ConferenceRooms;
}

type ApiCommand = (args: string, ctx: ApiContext) => string | Promise<string>;

/** sofia's separator line: 97 `=` */
const LINE = '='.repeat(97);

/** `%25s\t%s\t  %40s\t%s\n`, the columns of `sofia status`. */
function sofiaRow(name: string, type: string, data: string, state: string): string {
  return `${name.padStart(25)}\t${type}\t  ${data.padStart(40)}\t${state}\n`;
}

/** `sofia status`: the drachtio_mrf profile and its SIP URL (fsmrf reads the address from it). */
function sofia(args: string, ctx: ApiContext): string {
  if (args.trim().toLowerCase() !== 'status') return '-ERR Usage: sofia status (the only sofia command served)\n';
  const p = ctx.profile;
  return (
    sofiaRow('Name', '   Type', 'Data', 'State') + `${LINE}\n` + sofiaRow(p.name, 'profile', `sip:mod_sofia@${p.address}`, `RUNNING (${ctx.sessions.count})`) + `${LINE}\n` + '1 profile 0 aliases\n'
  );
}

/** `status`, as mod_commands writes it (the stack-size line is left out: there is no C stack to report). */
function status(_args: string, ctx: ApiContext): string {
  const s = ctx.sessions;
  const perSec = s.perSecond();
  return (
    `UP ${uptimeText(ctx.now() - ctx.startedAt)}\n` +
    `FreeSWITCH (Version ${ctx.id.version}) is ready\n` +
    `${s.sinceStartup} session(s) since startup\n` +
    `${s.count} session(s) - peak ${s.peak}, last 5min ${s.peak} \n` +
    `${perSec} session(s) per Sec out of max ${s.max}, peak ${s.peakPerSecond}, last 5min ${s.peakPerSecond} \n` +
    `${s.max} session(s) max\n` +
    `min idle cpu 0.00/${ctx.idleCpu().toFixed(2)}\n`
  );
}

const COMMANDS: Record<string, ApiCommand> = {
  sofia,
  status,
  version: (_a, ctx) => `FreeSWITCH Version ${ctx.id.version}\n`,
  hostname: (_a, ctx) => ctx.id.hostname,
  uptime: (_a, ctx) => `${Math.floor((ctx.now() - ctx.startedAt) / 1000)}\n`,
  uuid_audio_fork: (args, ctx) => ctx.forks.command(args),
  uuid_dub: (args, ctx) => ctx.dub.command(args),
  ...UUID_COMMANDS,
  conference: conferenceApi,
};

/** Runs `<command> <args>`; its output (an error is output too, as FreeSWITCH's are). */
export async function runApi(command: string, args: string, ctx: ApiContext): Promise<string> {
  const fn = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!fn) return `-ERR ${command} Command not found!\n`;
  return fn(args, ctx);
}

/** `api status` → ['status', ''], `api sofia status` → ['sofia', 'status']. */
export function splitApi(line: string): [string, string] {
  const text = line.trim();
  const sp = text.indexOf(' ');
  return sp < 0 ? [text, ''] : [text.slice(0, sp), text.slice(sp + 1)];
}
