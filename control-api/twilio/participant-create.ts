/**
 * POST Conferences/{CF… or friendly name}/Participants.json: dials a participant into the room. The
 * call goes through POST /v1.0/calls's own path (createCalls: egress, caller id, whitelist, balance,
 * concurrency), like POST Calls.json; its flow is conference_join (the room's id), then hangup: the
 * call ends when it leaves the room. A friendly name in the path names the live room of that name,
 * made (as by a TwiML join: it ends when its last participant leaves) when there is none, as on
 * Twilio. The answer is the Participant, `queued`, with the new CallSid. A CF SID of a room that is
 * missing or over is 20404.
 */
import type { Request, Response } from 'express';
import type { AppContext } from '../context';
import { ApiError } from '../../core/errors';
import { CONFERENCE_NAME_MAX } from '../../core/flow/options/later';
import { conferencesRepo, type ConferenceRow } from '../../core/repos/conferences';
import { conferencecallsRepo } from '../../core/repos/conferencecalls';
import { accountSid, callSid, toSid } from '../../core/twilio/sids';
import { createCalls } from '../routes/calls';
import { addressOf } from './addresses';
import { authOf } from './auth';
import { callbackOf, fromCreateError } from './calls';
import { conferenceUri, ownedConference } from './conferences';
import { badParam, notFound } from './errors';
import { bool, int, one, oneOf, rfc2822, type Params } from './params';

/** Participant parameters this platform does not act on: refused (20001) rather than ignored. */
const UNSUPPORTED = [
  'WaitUrl',
  'WaitMethod',
  'ConferenceStatusCallback',
  'ConferenceStatusCallbackEvent',
  'ConferenceStatusCallbackMethod',
  'ConferenceRecord',
  'ConferenceTrim',
  'ConferenceRecordingStatusCallback',
  'RecordingStatusCallback',
  'Coaching',
  'CallSidToCoach',
  'MachineDetection',
  'AsyncAmd',
  'CallReason',
  'JitterBufferSize',
  'Byoc',
  'CallToken',
];

const LABEL_MAX = 128;

/** The room the path names: a CF SID (must be live), or a friendly name (the live room of that name, made when there is none). */
async function roomOf(ctx: AppContext, customerId: string, key: string): Promise<{ room: ConferenceRow; created: boolean }> {
  if (/^CF[0-9a-f]{32}$/i.test(key)) {
    const room = await ownedConference(ctx, customerId, key);
    if (room.status === 'terminating' || room.status === 'terminated') throw notFound(`Conference ${key}`);
    return { room, created: false };
  }
  if (key.trim() === '') throw notFound('Conference');
  if (key.length > CONFERENCE_NAME_MAX) throw badParam(`A conference name is at most ${CONFERENCE_NAME_MAX} characters`);
  const r = await conferencesRepo(ctx.db).namedOrCreate(customerId, key);
  return { room: r.conference, created: r.created };
}

export async function createParticipant(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const p = req.body as Params;
  for (const n of UNSUPPORTED) if (p[n] !== undefined) throw badParam(`${n} is not supported here`);
  const to = addressOf('To', one(p, 'To'));
  const from = addressOf('From', one(p, 'From'));
  const label = one(p, 'Label', LABEL_MAX + 1);
  if (label !== undefined && (label.length === 0 || label.length > LABEL_MAX)) throw badParam(`Label must be 1 to ${LABEL_MAX} characters`);
  bool(p, 'EarlyMedia');
  oneOf(p, 'Beep', ['true', 'false', 'onEnter', 'onExit'] as const, 'true');
  const muted = bool(p, 'Muted') ?? false;
  if (bool(p, 'StartConferenceOnEnter') === false) throw badParam('StartConferenceOnEnter=false is not supported here');
  const endOnExit = bool(p, 'EndConferenceOnExit') ?? false;
  int(p, 'Timeout', 5, 600);
  const record = bool(p, 'Record') ?? false;
  const callback = callbackOf(ctx, p);
  // every parameter checked before a room is looked up or made: a refused request makes nothing
  const { room, created } = await roomOf(ctx, auth.customerId, String(req.params.ConferenceSid));
  if (label !== undefined && (await conferencecallsRepo(ctx.db).presentIn(auth.customerId, room.id)).some((cc) => cc.label === label))
    throw badParam(`A participant labelled ${label.slice(0, 40)} is already in the conference`);
  const join = {
    conference_id: room.id,
    ...(muted ? { muted: true } : {}),
    ...(endOnExit ? { end_on_exit: true } : {}),
    ...(label !== undefined ? { label } : {}),
  };
  const actions = [...(record ? [{ type: 'recording_start', option: { format: 'wav' } }] : []), { type: 'conference_join', option: join }, { type: 'hangup', option: {} }];
  let call;
  try {
    const r = await createCalls(ctx, auth.customerId, { source: from, destinations: [to], actions }, { data: callback ? { twilio: callback } : {} });
    call = r.calls[0]!;
  } catch (e) {
    // the call was refused (egress, caller id, balance…): a room made for it alone is ended again
    if (created) await conferencesRepo(ctx.db).transition(room.id, 'terminated');
    throw e instanceof ApiError ? fromCreateError(e) : e;
  }
  const now = rfc2822(call.tm_create);
  res.status(201).json({
    account_sid: accountSid(auth.customerId),
    call_sid: callSid(call.id),
    conference_sid: toSid('CF', room.id),
    label: label ?? null,
    call_sid_to_coach: null,
    coaching: false,
    muted,
    hold: false,
    start_conference_on_enter: true,
    end_conference_on_exit: endOnExit,
    status: 'queued',
    queue_time: null,
    date_created: now,
    date_updated: now,
    uri: `${conferenceUri(room)}/Participants/${callSid(call.id)}.json`,
  });
}
