/**
 * The CUSTOM `conference::maintenance` events, with mod_conference's header names: the conference's
 * own (conference_event_add_data) and a member's (conference_member_add_event_data: the conference's,
 * Floor, the channel's basic headers, then the member's flags). Pure: the room and member are read.
 */
import type { Channel } from '../channel';
import type { EventFactory } from '../events';
import type { EslEvent } from '../wire';

export const MAINTENANCE = 'conference::maintenance';

/** What the events say of a conference. */
export interface RoomView {
  readonly name: string;
  readonly uuid: string;
  readonly profile: string;
  readonly domain: string;
  /** members counted (not ghosts) */
  readonly size: number;
  readonly ghosts: number;
  readonly floor: number | null;
}

/** What the events say of a member. */
export interface MemberView {
  readonly id: number;
  readonly channel: Channel;
  readonly speak: boolean;
  readonly hear: boolean;
  readonly talking: boolean;
  readonly held: boolean;
  readonly moderator: boolean;
  readonly ghost: boolean;
}

/** The energy level every member reports: the default profile's (conference.conf.xml `energy-level`). */
export const ENERGY_LEVEL = 100;

const SITE = { file: 'esl/conference/events.ts', func: 'conference_event' };
const bool = (b: boolean) => (b ? 'true' : 'false');

/** conference_event_add_data. */
export function roomHeaders(room: RoomView): [string, string][] {
  return [
    ['Conference-Name', room.name],
    ['Conference-Domain', room.domain],
    ['Conference-Size', String(room.size)],
    ['Conference-Ghosts', String(room.ghosts)],
    ['Conference-Profile-Name', room.profile],
    ['Conference-Unique-ID', room.uuid],
  ];
}

/** conference_member_add_event_data, with the channel's basic data (no variables: verbose-events off, FreeSWITCH's default). */
export function memberHeaders(room: RoomView, m: MemberView): [string, string][] {
  const channel = m.channel.headers().filter(([k]) => !k.startsWith('variable_'));
  return [
    ...roomHeaders(room),
    ['Floor', bool(room.floor === m.id)],
    ...channel,
    ['Channel-Call-UUID', m.channel.uuid],
    ['Video', 'false'],
    ['Hear', bool(m.hear)],
    ['See', 'true'],
    ['Speak', bool(m.speak)],
    ['Talking', bool(m.talking)],
    ['Mute-Detect', 'false'],
    ['Hold', bool(m.held)],
    ['Member-ID', String(m.id)],
    ['Member-Type', m.moderator ? 'moderator' : 'member'],
    ['Member-Ghost', bool(m.ghost)],
    ['Energy-Level', String(ENERGY_LEVEL)],
    ['Current-Energy', '0'],
  ];
}

/** One maintenance event: `Action` after the room's or member's headers and the action's own. */
export function maintenance(events: EventFactory, action: string, base: [string, string][], own: [string, string][] = []): EslEvent {
  return events.make('CUSTOM', SITE, [...base, ...own, ['Action', action]], { subclass: MAINTENANCE });
}
