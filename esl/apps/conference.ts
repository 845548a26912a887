/**
 * The `conference` application (mod_conference's conference_function): `<name>[@<profile>][+<pin>]
 * [+flags{<flag>|…}]` puts the channel in that room (made when it is the first), its engine endpoint
 * in the room's mix, until it is kicked, hung up by the API, the room ends, or the channel hangs up;
 * then the application returns and the channel goes on (FreeSWITCH's outbound socket parks it).
 */
import type { ConferenceRoom, Member, MemberFlags } from '../conference/room';
import type { ConferenceRooms } from '../conference/rooms';
import { AppRefused, setVar, type AppContext } from './context';

export interface ConferenceData {
  name: string;
  profile: string;
  pin: string;
  flags: Set<string>;
  /** `bridge:<name>:<dial string>` (conference_function's bridging conference) */
  bridge: boolean;
}

/** conference_function's parse: `+flags{…}` cut first, then `+pin`, then the last `@profile`. null: no name. */
export function conferenceData(data: string): ConferenceData | null {
  let rest = data;
  let flags = '';
  const f = rest.indexOf('+flags{');
  if (f >= 0) {
    flags = rest.slice(f + 7);
    rest = rest.slice(0, f);
    const close = flags.indexOf('}');
    if (close >= 0) flags = flags.slice(0, close);
  }
  const bridge = /^bridge:/i.test(rest);
  rest = rest.replace(/^ +/, '');
  let pin = '';
  const plus = rest.indexOf('+');
  if (plus >= 0) {
    pin = rest.slice(plus + 1);
    rest = rest.slice(0, plus);
  }
  let profile = 'default';
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    profile = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  if (!rest) return null;
  const set = new Set(
    flags
      .split('|')
      .map((x) => x.trim().toLowerCase())
      .filter(Boolean),
  );
  return { name: rest, profile, pin, flags: set, bridge };
}

/** The flags a member enters with (`mute`, `deaf`, `moderator`, `ghost`, `endconf`; the rest do not change the audio here). */
export function memberFlags(flags: Set<string>): MemberFlags {
  return { mute: flags.has('mute'), deaf: flags.has('deaf'), moderator: flags.has('moderator'), ghost: flags.has('ghost'), endconf: flags.has('endconf') };
}

/** The caller into the room: null when it hung up meanwhile, or the room is locked or full (no sounds are configured). */
async function enter(ctx: AppContext, room: ConferenceRoom, rooms: ConferenceRooms, spec: ConferenceData): Promise<Member | null> {
  if (ctx.signal.aborted || room.locked || room.full) return null;
  const id = rooms.nextMemberId();
  setVar(ctx, 'conference_name', room.name);
  setVar(ctx, 'conference_member_id', String(id));
  return room.add(id, ctx.channel, memberFlags(spec.flags));
}

export async function conference(ctx: AppContext, data: string): Promise<string> {
  const rooms = ctx.conferences;
  if (!rooms) throw new AppRefused('conference: this switch has no conference rooms');
  const spec = conferenceData(data);
  if (!spec) return '_none_'; // "Invalid arguments": the application returns
  if (spec.bridge) throw new AppRefused('conference: bridge: conferences are not served');
  // FreeSWITCH asks an inbound caller for the pin; this switch does not collect one
  if (spec.pin) throw new AppRefused('conference: pins are not served');
  if (spec.flags.has('join-only') && !rooms.get(spec.name)) {
    rooms.rejectedJoinOnly(ctx.channel, spec.name, spec.profile);
    throw new AppRefused(`conference: ${spec.name} does not exist (join-only)`);
  }
  // a room that ends while this one joins is made again, once
  for (let attempt = 0; attempt < 2; attempt++) {
    const room = await rooms.open(spec.name, spec.profile, ctx.channel.endpoint);
    let member;
    try {
      member = await enter(ctx, room, rooms, spec);
    } catch (e) {
      if (room.ended && !ctx.signal.aborted) continue;
      throw e;
    } finally {
      // a room this caller made and never got into (hung up while it opened, the join failed) ends
      if (!member) room.endIfEmpty();
    }
    if (!member) return '_none_';
    const onHangup = () => room.leave(member, 'hangup');
    if (ctx.signal.aborted) onHangup();
    else ctx.signal.addEventListener('abort', onHangup, { once: true });
    await member.left;
    ctx.signal.removeEventListener('abort', onHangup);
    return '_none_';
  }
  return '_none_';
}
