/**
 * Our Call rows as Twilio's Call resource: SIDs for ids, Twilio's statuses and directions, RFC 2822
 * times, `to`/`from` as Twilio spells them (E.164, `sip:` URI, `client:NAME` for an extension or agent).
 */
import { EMPTY_UUID } from '../../core/ids';
import type { Address, CallRow } from '../../core/repos/calls';
import { accountSid, callSid } from '../../core/twilio/sids';
import type { TwilioCallStatus } from '../../core/twilio/statuses';
import { rfc2822 } from './params';

export const API_VERSION = '2010-04-01';
export { TWILIO_CALL_STATUSES, type TwilioCallStatus } from '../../core/twilio/statuses';

/** What a Twilio-created call keeps in its row's data (`data.twilio`). */
export interface TwilioCallData {
  status_callback: string;
  status_callback_method: 'GET' | 'POST';
  status_callback_events: string[];
}

export function twilioDataOf(c: Pick<CallRow, 'data'>): TwilioCallData | null {
  const t = c.data.twilio;
  if (!t || typeof t !== 'object') return null;
  const o = t as Record<string, unknown>;
  if (typeof o.status_callback !== 'string' || !Array.isArray(o.status_callback_events)) return null;
  return {
    status_callback: o.status_callback,
    status_callback_method: o.status_callback_method === 'GET' ? 'GET' : 'POST',
    status_callback_events: o.status_callback_events.filter((e): e is string => typeof e === 'string'),
  };
}

const FAILED = new Set(['failed', 'dialout']);

export function twilioStatus(c: Pick<CallRow, 'status' | 'hangup_reason' | 'hangup_by' | 'tm_progressing'>): TwilioCallStatus {
  switch (c.status) {
    case 'dialing':
      return 'queued';
    case 'ringing':
    case 'canceling':
      return 'ringing';
    case 'progressing':
    case 'terminating':
      return 'in-progress';
    case 'hangup':
      if (c.hangup_reason === 'busy') return 'busy';
      if (c.hangup_reason === 'noanswer' || c.hangup_reason === 'timeout') return 'no-answer';
      if (c.hangup_reason === 'cancel') return 'canceled';
      if (FAILED.has(c.hangup_reason)) return 'failed';
      if (c.tm_progressing) return 'completed';
      return c.hangup_by === 'local' ? 'canceled' : 'failed';
  }
}

/** How Twilio spells an address in `to` / `from`. */
export function twilioAddress(a: Address): string {
  switch (a.type) {
    case 'tel':
      return a.target;
    case 'sip':
      return /^sips?:/i.test(a.target) ? a.target : `sip:${a.target}`;
    case 'extension':
      return `client:${a.target_name || a.target}`;
    case 'agent':
      return `client:${a.target}`;
    default:
      return a.target;
  }
}

export function callUri(c: Pick<CallRow, 'id' | 'customer_id'>): string {
  return `/${API_VERSION}/Accounts/${accountSid(c.customer_id)}/Calls/${callSid(c.id)}`;
}

export function twilioDirection(c: Pick<CallRow, 'direction' | 'master_call_id'>): 'inbound' | 'outbound-api' | 'outbound-dial' {
  if (c.direction === 'incoming') return 'inbound';
  return c.master_call_id !== EMPTY_UUID ? 'outbound-dial' : 'outbound-api';
}

/** Seconds between answer and hangup (Twilio's `duration`): null until the call ended, "0" if never answered. */
export function durationOf(c: Pick<CallRow, 'tm_progressing' | 'tm_hangup'>): string | null {
  if (!c.tm_hangup) return null;
  if (!c.tm_progressing) return '0';
  return String(Math.max(0, Math.round((c.tm_hangup.getTime() - c.tm_progressing.getTime()) / 1000)));
}

export function twilioCallJson(c: CallRow) {
  const uri = callUri(c);
  return {
    sid: callSid(c.id),
    account_sid: accountSid(c.customer_id),
    parent_call_sid: c.master_call_id !== EMPTY_UUID ? callSid(c.master_call_id) : null,
    date_created: rfc2822(c.tm_create),
    date_updated: rfc2822(c.tm_update ?? c.tm_create),
    to: twilioAddress(c.destination),
    to_formatted: twilioAddress(c.destination),
    from: twilioAddress(c.source),
    from_formatted: twilioAddress(c.source),
    phone_number_sid: null,
    status: twilioStatus(c),
    start_time: rfc2822(c.tm_progressing ?? (c.status === 'dialing' ? null : c.tm_create)),
    end_time: rfc2822(c.tm_hangup),
    duration: durationOf(c),
    price: null,
    price_unit: 'USD',
    direction: twilioDirection(c),
    answered_by: null,
    api_version: API_VERSION,
    forwarded_from: null,
    group_sid: null,
    caller_name: null,
    queue_time: '0',
    trunk_sid: null,
    uri: `${uri}.json`,
    subresource_uris: {
      recordings: `${uri}/Recordings.json`,
      notifications: `${uri}/Notifications.json`,
      events: `${uri}/Events.json`,
      streams: `${uri}/Streams.json`,
    },
  };
}
