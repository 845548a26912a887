/**
 * Twilio's request parameters for a TwiML fetch: the call's (CallSid, AccountSid, From, To,
 * CallStatus, Direction, ApiVersion, CallerName). Those a verb's action callback adds (Digits,
 * RecordingUrl, DialCallStatus, ...) are left in `twiml.param.*` (core/twiml/callback-params.ts).
 */
import { accountSid, callSid } from '../../core/twilio/sids';
import type { Address, CallInfo, CallStatus } from '../flow/call-port';

const CALL_STATUS: Readonly<Record<CallStatus, string>> = {
  dialing: 'queued',
  ringing: 'ringing',
  progressing: 'in-progress',
  terminating: 'completed',
  canceling: 'canceled',
  hangup: 'completed',
};

/** A party as Twilio writes it: E.164/number as is, sip: URIs as is, an extension as client:NAME. */
export function twilioParty(a: Address): string {
  const t = a.target ?? '';
  if (a.type === 'extension') return `client:${a.target_name || t}`;
  return t;
}

export function callParams(customerId: string, info: CallInfo | undefined): Record<string, string> {
  const p: Record<string, string> = { AccountSid: accountSid(customerId), ApiVersion: '2010-04-01' };
  if (!info) return p;
  p.CallSid = callSid(info.id);
  p.From = twilioParty(info.source);
  p.To = twilioParty(info.destination);
  // an inbound call rings from its INVITE on (its 180 goes before the row says ringing), so one not yet
  // answered is `ringing` whatever the row's write has reached, as on Twilio; never `queued`
  p.CallStatus = info.direction === 'incoming' && info.status === 'dialing' ? 'ringing' : CALL_STATUS[info.status];
  p.Direction = info.direction === 'incoming' ? 'inbound' : 'outbound-api';
  if (info.source.name) p.CallerName = info.source.name;
  return p;
}
