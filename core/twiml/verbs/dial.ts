/**
 * <Dial>: Number / Sip / Client (an extension of the customer, by name) nouns, or plain text (a
 * number), become one connect: every destination rings at once and the first to answer is bridged,
 * as on Twilio. Conference and Queue take this platform's conference or queue id (a UUID or its
 * CF…/QU… SID) or a friendly name, and become conference_join / queue_dequeue (by id or by name:
 * the name is looked up, or the room made, when the action runs).
 * `callerId` is the source. With `action`, the URL is fetched after the bridge ends with
 * DialCallStatus, DialCallDuration and DialCallSid (with <Sip>: DialSipCallId, DialSipResponseCode);
 * without it, the next verb runs. Around a
 * <Conference>, the action is fetched when the caller leaves the room with its call up, with
 * DialCallStatus completed (failed: the room was full).
 * `timeout` (ring seconds, default 30) and `timeLimit` (seconds after the answer, default 4 h) become
 * the connect's ring_timeout / duration_limit. The caller is answered before the dial unless
 * answerOnBridge="true" (then the connect answers it when the callee does). record
 * (record-from-answer[-dual], true) records the caller's call, both directions mixed in one channel,
 * from the answer to the bridge's end; hangupOnStar: the caller's * ends the bridge and the next
 * verb (or the action) runs. recordingStatusCallback* (events completed, absent) with a record:
 * a twiml_recording after the connect. record-from-ringing*, ringTone and noun attributes are refused.
 */
import { CONFERENCE_CALLBACK_EVENTS, CONFERENCE_NAME_MAX, QUEUE_NAME_MAX } from '../../flow/options/later';
import { fromSid } from '../../twilio/sids';
import { schemaError } from '../errors';
import { childElements, textOf, type TwimlElement } from '../parse';
import { Attrs, TWIML_VARS, type Program } from '../program';
import { CONFERENCE_RECORD_ATTRS, conferenceRecordOption } from './conference-record';
import { RECORDING_CALLBACK_ATTRS, recordingCallbackOption } from './recording-callbacks';

const ATTRS = ['action', 'method', 'timeout', 'callerId', 'answerOnBridge', 'record', 'hangupOnStar', 'timeLimit', ...RECORDING_CALLBACK_ATTRS];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Dest = { type: 'tel' | 'sip' | 'extension'; target: string };

/** A conference or queue noun's text: this platform's id (a UUID or its CF…/QU… SID), else a friendly name. */
function roomOf(noun: TwimlElement, prefix: 'CF' | 'QU', maxName: number): { id: string } | { name: string } {
  const t = textOf(noun);
  if (!t) throw schemaError(`<${noun.name}> needs a name`);
  if (UUID.test(t)) return { id: t.toLowerCase() };
  const id = fromSid(prefix, t);
  if (id) return { id };
  if (t.length > maxName) throw schemaError(`<${noun.name}> name must be at most ${maxName} characters`);
  return { name: t };
}

/**
 * <Conference>: by id or by name (the account's live room of that name, made on the first join and
 * ended when its last participant leaves). muted, endConferenceOnExit, maxParticipants (used when
 * this join makes the room), participantLabel; startConferenceOnEnter="false" waits for the room to
 * start hearing waitUrl (waitMethod; absent: music on hold, "": silence); waitUrl and waitMethod
 * matter only then (Twilio plays the wait music only before the room starts). beep accepted.
 * record, trim, recordingStatusCallback*: conference-record.ts.
 */
function compileConference(p: Program, room: TwimlElement): void {
  const c = new Attrs(room, [
    'startConferenceOnEnter',
    'endConferenceOnExit',
    'muted',
    'beep',
    'maxParticipants',
    'participantLabel',
    'waitUrl',
    'waitMethod',
    'statusCallback',
    'statusCallbackEvent',
    'statusCallbackMethod',
    'coach',
    ...CONFERENCE_RECORD_ATTRS,
  ]);
  const waits = c.bool('startConferenceOnEnter') === false;
  const waitUrl = c.str('waitUrl');
  const waitMethod = c.method('waitMethod');
  const beep = c.oneOf('beep', ['true', 'false', 'onEnter', 'onExit'] as const);
  const coach = c.str('coach');
  const coached = coach === undefined ? undefined : fromSid('CA', coach);
  if (coach !== undefined && !coached) throw schemaError('<Conference> coach must be a CallSid (CA followed by 32 hex digits)');
  const max = c.int('maxParticipants', 2, 250);
  const label = c.str('participantLabel');
  if (label !== undefined && (label.length === 0 || label.length > 128)) throw schemaError('<Conference> participantLabel must be 1 to 128 characters');
  const target = roomOf(room, 'CF', CONFERENCE_NAME_MAX);
  if ('id' in target && max !== undefined) throw schemaError('<Conference> maxParticipants applies to a room made by a name only');
  p.add('conference_join', {
    ...('id' in target ? { conference_id: target.id } : { name: target.name }),
    ...(max !== undefined ? { max_participants: max } : {}),
    ...(c.bool('muted') ? { muted: true } : {}),
    ...(c.bool('endConferenceOnExit') ? { end_on_exit: true } : {}),
    ...(label !== undefined ? { label } : {}),
    ...statusCallbackOption(p, c),
    // only an explicit beep plays one (Twilio's default is true: see docs/twilio.md)
    ...(beep !== undefined && beep !== 'false' ? { beep } : {}),
    ...(coached ? { coach_call_id: coached } : {}),
    ...conferenceRecordOption(p, c),
    // waitUrl="" is silence; a URL resolves against the document's (Twilio's default POST)
    ...(waits ? { start_on_enter: false, ...(waitUrl !== undefined ? { wait_url: waitUrl === '' ? '' : p.url('Conference', 'waitUrl', waitUrl) } : {}), wait_method: waitMethod ?? 'POST' } : {}),
  });
}

/**
 * statusCallback (with statusCallbackMethod, default POST, and statusCallbackEvent: space-separated
 * start, end, join, leave, mute, hold, speaker, modify, announcement; default "start end") →
 * conference_join's status_callback; any other word is a 12200.
 */
function statusCallbackOption(p: Program, c: Attrs): { status_callback?: { url: string; method: 'GET' | 'POST'; events: string[] } } {
  const url = c.str('statusCallback');
  const method = c.method('statusCallbackMethod') ?? 'POST';
  const words = (c.str('statusCallbackEvent') ?? 'start end').split(/[\s,]+/).filter(Boolean);
  for (const w of words) {
    if (!(CONFERENCE_CALLBACK_EVENTS as readonly string[]).includes(w))
      throw schemaError(`<Conference> statusCallbackEvent "${w}" is not an event (supported: ${CONFERENCE_CALLBACK_EVENTS.join(' ')})`);
  }
  if (url === undefined) return {};
  if (!words.length) throw schemaError('<Conference> statusCallbackEvent names no event');
  return { status_callback: { url: p.url('Conference', 'statusCallback', url), method, events: [...new Set(words)] } };
}

/** <Queue> / <Enqueue>'s queue: by id or by name (made on first use). */
export function queueJoinOption(noun: TwimlElement): Record<string, string> {
  const target = roomOf(noun, 'QU', QUEUE_NAME_MAX);
  return 'id' in target ? { queue_id: target.id } : { name: target.name };
}

/**
 * <Dial><Queue>: dequeues (queue_dequeue): the oldest caller waiting in the queue, waiting `timeout`
 * seconds for one; `url` (`method`, default POST) is played to that caller before the bridge. With
 * `action`: DialCallStatus (completed / no-answer), QueueSid, QueueTime.
 */
function compileDequeue(p: Program, a: Attrs, room: TwimlElement, ringSec: number): void {
  const q = new Attrs(room, ['url', 'method']);
  const url = q.str('url');
  p.add('queue_dequeue', {
    ...queueJoinOption(room),
    ...(url !== undefined ? { url: p.url('Queue', 'url', url), method: q.method() ?? 'POST' } : {}),
    timeout: ringSec * 1000,
  });
  const action = a.str('action');
  if (action === undefined) return;
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}DialCallStatus`, value: '${svc.dequeue.status}' });
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}QueueSid`, value: '${svc.dequeue.queue_sid}' });
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}QueueTime`, value: '${svc.dequeue.queue_time}' });
  p.add('twiml', { url: p.url('Dial', 'action', action), method: a.method() ?? 'POST' });
}

function destination(noun: TwimlElement): Dest {
  new Attrs(noun, []);
  const t = textOf(noun);
  if (!t) throw schemaError(`<${noun.name}> needs a value`);
  switch (noun.name) {
    case 'Number':
      if (!/^\+?[0-9*#]{1,20}$/.test(t)) throw schemaError('<Number> must be a phone number');
      return { type: 'tel', target: t };
    case 'Sip':
      if (!/^sips?:[^\s<>"]+$/i.test(t)) throw schemaError('<Sip> must be a sip: URI');
      return { type: 'sip', target: t };
    default:
      if (!/^[A-Za-z0-9_.@-]{1,128}$/.test(t)) throw schemaError('<Client> must be an extension name');
      return { type: 'extension', target: t };
  }
}

/** The longest ring of a <Dial>, seconds (the connect action's ring_timeout allows 600 s). */
const MAX_RING_SEC = 600;

/**
 * <Dial timeout>: Twilio takes any positive integer of seconds (default 30) and answers anything else with
 * its warning 13212, the Dial going on with the default. So here: 1-600 as given; a larger integer rings
 * 600 s, anything else (0, negative, not an integer) 30 s, each with the warning.
 */
function dialTimeout(p: Program, el: TwimlElement): number {
  const v = el.attrs.timeout;
  if (v === undefined) return 30;
  const n = /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (n >= 1 && n <= MAX_RING_SEC) return n;
  const used = n > MAX_RING_SEC ? MAX_RING_SEC : 30;
  p.warn(13212, `<Dial> timeout must be a positive integer of seconds (here at most ${MAX_RING_SEC}): "${v.slice(0, 32)}", ${used} s used`);
  return used;
}

/** The longest call after the answer a <Dial timeLimit> may ask, seconds (24 h); the default is 4 h. */
const MAX_LIMIT_SEC = 86_400;
const DEFAULT_LIMIT_SEC = 14_400;

/**
 * <Dial timeLimit>: as timeout, Twilio takes a positive integer of seconds (default 4 h) and answers
 * anything else with a warning, 13216, the Dial going on. So here: 1-86400 as given; a larger integer
 * 24 h, anything else 4 h, each with the warning.
 */
function dialTimeLimit(p: Program, el: TwimlElement): number {
  const v = el.attrs.timeLimit;
  if (v === undefined) return DEFAULT_LIMIT_SEC;
  const n = /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (n >= 1 && n <= MAX_LIMIT_SEC) return n;
  const used = n > MAX_LIMIT_SEC ? MAX_LIMIT_SEC : DEFAULT_LIMIT_SEC;
  p.warn(13216, `<Dial> timeLimit must be a positive integer of seconds (here at most ${MAX_LIMIT_SEC}): "${v.slice(0, 32)}", ${used} s used`);
  return used;
}

export function compileDial(p: Program, el: TwimlElement): void {
  const a = new Attrs(el, ATTRS);
  const record = a.oneOf('record', ['do-not-record', 'record-from-answer', 'record-from-answer-dual', 'true', 'false'] as const);
  const recorded = record === 'record-from-answer' || record === 'record-from-answer-dual' || record === 'true';
  const hangupOnStar = a.bool('hangupOnStar') === true;
  const ringSec = dialTimeout(p, el);
  const limitSec = dialTimeLimit(p, el);
  const answerOnBridge = a.bool('answerOnBridge') === true;
  // with no recording (record absent or do-not-record) there is nothing to call back about, as on Twilio
  const callbacks = recordingCallbackOption(p, 'Dial', a, 'svc.connect.recording_id');
  const nouns = childElements(el);
  const text = textOf(el);
  if (nouns.length && text) throw schemaError('<Dial> takes either a number or nouns, not both');
  const room = nouns.find((n) => n.name === 'Conference' || n.name === 'Queue');
  if (room) {
    if (nouns.length > 1) throw schemaError(`<Dial><${room.name}> must be the only noun`);
    if (room.name === 'Queue') return compileDequeue(p, a, room, ringSec);
    compileConference(p, room);
    const action = a.str('action');
    if (action === undefined) return;
    // the caller left the room with the call still up (the room ended, a kick, hangupOnStar): the action
    // decides what comes next, with DialCallStatus completed (failed when the room was full)
    p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}DialCallStatus`, value: '${svc.conference.status}' });
    p.add('twiml', { url: p.url('Dial', 'action', action), method: a.method() ?? 'POST' });
    return;
  }
  const dests: Dest[] = text ? [destination({ name: 'Number', attrs: {}, children: [{ text }] })] : [];
  for (const n of nouns) {
    if (n.name !== 'Number' && n.name !== 'Sip' && n.name !== 'Client') throw schemaError(`<Dial> cannot contain <${n.name}>`);
    dests.push(destination(n));
  }
  if (!dests.length) throw schemaError('<Dial> needs a number or a noun');
  const option: Record<string, unknown> = {
    destinations: dests,
    ring_timeout: ringSec * 1000,
    duration_limit: limitSec * 1000,
    ...(recorded ? { record: true } : {}),
    ...(hangupOnStar ? { hangup_on_star: true } : {}),
  };
  const callerId = a.str('callerId');
  if (callerId !== undefined) option.source = /^sips?:/i.test(callerId) ? { type: 'sip', target: callerId } : { type: 'tel', target: callerId };
  // Twilio answers the caller before dialling unless answerOnBridge (then the bridge answers it)
  if (!answerOnBridge) p.add('answer', {});
  p.add('connect', option);
  if (recorded && callbacks) p.add('twiml_recording', callbacks);
  const action = a.str('action');
  if (action === undefined) return;
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}DialCallStatus`, value: '${svc.connect.status}' });
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}DialCallDuration`, value: '${svc.connect.duration}' });
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}DialCallSid`, value: '${svc.connect.call_sid}' });
  // <Sip> only, as Twilio: the outbound leg's SIP Call-ID and the final response it got
  if (dests.some((d) => d.type === 'sip')) {
    p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}DialSipCallId`, value: '${svc.connect.sip_call_id}' });
    p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}DialSipResponseCode`, value: '${svc.connect.sip_status}' });
  }
  // the action waits for the recording's end and gets RecordingSid/RecordingUrl/RecordingDuration
  if (recorded) p.add('variable_set', { key: TWIML_VARS.waitRecording, value: '${svc.connect.recording_id}' });
  p.add('twiml', { url: p.url('Dial', 'action', action), method: a.method() ?? 'POST' });
}
