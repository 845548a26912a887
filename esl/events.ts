/**
 * The events this switch fires, with the headers FreeSWITCH puts on every event (Core-UUID, host
 * names, the three dates, the calling site, a sequence number), and the names a client may subscribe
 * to. Pure: the clock and the identity are passed in.
 */
import type { EslEvent } from './wire';

/** FreeSWITCH's event type names (switch_event.c's table), the words `event`/`nixevent` take. */
export const EVENT_NAMES = [
  'CUSTOM',
  'CLONE',
  'CHANNEL_CREATE',
  'CHANNEL_DESTROY',
  'CHANNEL_STATE',
  'CHANNEL_CALLSTATE',
  'CHANNEL_ANSWER',
  'CHANNEL_HANGUP',
  'CHANNEL_HANGUP_COMPLETE',
  'CHANNEL_EXECUTE',
  'CHANNEL_EXECUTE_COMPLETE',
  'CHANNEL_HOLD',
  'CHANNEL_UNHOLD',
  'CHANNEL_BRIDGE',
  'CHANNEL_UNBRIDGE',
  'CHANNEL_PROGRESS',
  'CHANNEL_PROGRESS_MEDIA',
  'CHANNEL_OUTGOING',
  'CHANNEL_PARK',
  'CHANNEL_UNPARK',
  'CHANNEL_APPLICATION',
  'CHANNEL_ORIGINATE',
  'CHANNEL_UUID',
  'API',
  'LOG',
  'INBOUND_CHAN',
  'OUTBOUND_CHAN',
  'STARTUP',
  'SHUTDOWN',
  'PUBLISH',
  'UNPUBLISH',
  'TALK',
  'NOTALK',
  'SESSION_CRASH',
  'MODULE_LOAD',
  'MODULE_UNLOAD',
  'DTMF',
  'MESSAGE',
  'PRESENCE_IN',
  'NOTIFY_IN',
  'PRESENCE_OUT',
  'PRESENCE_PROBE',
  'MESSAGE_WAITING',
  'MESSAGE_QUERY',
  'ROSTER',
  'CODEC',
  'BACKGROUND_JOB',
  'DETECTED_SPEECH',
  'DETECTED_TONE',
  'PRIVATE_COMMAND',
  'HEARTBEAT',
  'TRAP',
  'ADD_SCHEDULE',
  'DEL_SCHEDULE',
  'EXE_SCHEDULE',
  'RE_SCHEDULE',
  'RELOADXML',
  'NOTIFY',
  'PHONE_FEATURE',
  'PHONE_FEATURE_SUBSCRIBE',
  'SEND_MESSAGE',
  'RECV_MESSAGE',
  'REQUEST_PARAMS',
  'CHANNEL_DATA',
  'GENERAL',
  'COMMAND',
  'SESSION_HEARTBEAT',
  'CLIENT_DISCONNECTED',
  'SERVER_DISCONNECTED',
  'SEND_INFO',
  'RECV_INFO',
  'RECV_RTCP_MESSAGE',
  'SEND_RTCP_MESSAGE',
  'CALL_SECURE',
  'NAT',
  'RECORD_START',
  'RECORD_STOP',
  'PLAYBACK_START',
  'PLAYBACK_STOP',
  'CALL_UPDATE',
  'FAILURE',
  'SOCKET_DATA',
  'MEDIA_BUG_START',
  'MEDIA_BUG_STOP',
  'CONFERENCE_DATA_QUERY',
  'CONFERENCE_DATA',
  'CALL_SETUP_REQ',
  'CALL_SETUP_RESULT',
  'CALL_DETAIL',
  'DEVICE_STATE',
  'TEXT',
  'SHUTDOWN_REQUESTED',
  'ALL',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

const KNOWN = new Set<string>(EVENT_NAMES);

/** A subscription word as an event name: case ignored, `SWITCH_EVENT_` prefix allowed (switch_name_event); null if none. */
export function eventName(word: string): EventName | null {
  let w = word.toUpperCase();
  if (w.startsWith('SWITCH_EVENT_')) w = w.slice('SWITCH_EVENT_'.length);
  return KNOWN.has(w) ? (w as EventName) : null;
}

/** Who this switch is, as every event and `status` say it. */
export interface SwitchIdentity {
  coreUuid: string;
  hostname: string;
  ipv4: string;
  ipv6: string;
  /** FreeSWITCH-Version: the version line of the FreeSWITCH release whose wire this follows, and ours */
  version: string;
}

/** Where an event comes from, for Event-Calling-File/-Function (our file and function, not FreeSWITCH's C ones). */
export interface CallingSite {
  file: string;
  func: string;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `YYYY-MM-DD hh:mm:ss` in local time, as Event-Date-Local. */
export function localDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Makes events with FreeSWITCH's common headers; owns the Event-Sequence counter of one switch. */
export class EventFactory {
  private sequence = 0;

  constructor(
    private readonly id: SwitchIdentity,
    private readonly now: () => number,
  ) {}

  /** An event named `name` (`CUSTOM` with `subclass`), its own headers after the common ones. */
  make(name: EventName, site: CallingSite, headers: [string, string][], opts: { subclass?: string; body?: string } = {}): EslEvent {
    const ms = this.now();
    const common: [string, string][] = [
      ['Event-Name', name],
      ...(opts.subclass ? ([['Event-Subclass', opts.subclass]] as [string, string][]) : []),
      ['Core-UUID', this.id.coreUuid],
      ['FreeSWITCH-Hostname', this.id.hostname],
      ['FreeSWITCH-Switchname', this.id.hostname],
      ['FreeSWITCH-IPv4', this.id.ipv4],
      ['FreeSWITCH-IPv6', this.id.ipv6],
      ['Event-Date-Local', localDate(ms)],
      ['Event-Date-GMT', new Date(ms).toUTCString()],
      ['Event-Date-Timestamp', `${Math.round(ms * 1000)}`],
      ['Event-Calling-File', site.file],
      ['Event-Calling-Function', site.func],
      ['Event-Calling-Line-Number', '0'],
      ['Event-Sequence', `${++this.sequence}`],
    ];
    return opts.body === undefined ? { headers: [...common, ...headers] } : { headers: [...common, ...headers], body: opts.body };
  }
}

/** `0 years, 0 days, 1 hour, 2 minutes, …` as Up-Time and `status` write an uptime (singular for 1). */
export function uptimeText(ms: number): string {
  const us = Math.max(0, Math.round(ms * 1000));
  const parts: [number, string][] = [
    [Math.floor(us / 31_536_000_000_000), 'year'],
    [Math.floor(us / 86_400_000_000) % 365, 'day'],
    [Math.floor(us / 3_600_000_000) % 24, 'hour'],
    [Math.floor(us / 60_000_000) % 60, 'minute'],
    [Math.floor(us / 1_000_000) % 60, 'second'],
    [Math.floor(us / 1000) % 1000, 'millisecond'],
    [us % 1000, 'microsecond'],
  ];
  return parts.map(([n, unit]) => `${n} ${unit}${n === 1 ? '' : 's'}`).join(', ');
}
