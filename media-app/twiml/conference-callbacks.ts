/**
 * A conference's Twilio status callbacks (<Conference statusCallback statusCallbackEvent
 * statusCallbackMethod>, docs/twilio.md "Conference status callbacks"): the room (media-app/conference/
 * room.ts, on the node hosting it) reports conference-start, conference-end, participant-join,
 * participant-leave, and participant-mute/-unmute and participant-hold/-unhold (a participant's call on
 * the hosting node muted or held: REST Participants update, POST /calls/{id}/mute|hold), and
 * participant-speech-start/-stop (the mixer's talk detector, media-engine/dsp/talk.ts),
 * participant-modify (REST Participants update changed EndConferenceOnExit, BeepOnExit or Coaching),
 * announcement-end / announcement-fail (a Conferences or Participants AnnounceUrl played, or not); each one the room's statusCallback asked for is sent signed (X-Twilio-Signature)
 * through the egress policy with Twilio's parameters and a SequenceNumber, one after the other in the
 * order they happened (a chain per room), retried as the recording callbacks are.
 */
import type { Logger } from 'pino';
import type { Knex } from '../../core/db/knex';
import type { CONFERENCE_CALLBACK_EVENTS } from '../../core/flow/options/later';
import { callsRepo } from '../../core/repos/calls';
import { conferencesRepo } from '../../core/repos/conferences';
import type { ConferencecallRow } from '../../core/repos/conferencecalls';
import { customersRepo } from '../../core/repos/customers';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { accountSid, callSid, toSid } from '../../core/twilio/sids';
import type { FlowHttp } from '../kit/http';
import { sendSigned } from './recording-callbacks';

/** The StatusCallbackEvent value of each statusCallbackEvent word this platform sends. */
type ConferenceCallbackEvent = (typeof CONFERENCE_CALLBACK_EVENTS)[number];
const EVENT_NAME: Readonly<Record<Exclude<ConferenceCallbackEvent, 'mute' | 'hold' | 'speaker' | 'announcement'>, string>> = {
  start: 'conference-start',
  end: 'conference-end',
  join: 'participant-join',
  leave: 'participant-leave',
  modify: 'participant-modify',
};

/** A participant's mute and hold as they stood when it changed. */
export interface PartyState {
  muted: boolean;
  held: boolean;
}

function eventName(h: ConferenceHappening): string {
  switch (h.event) {
    case 'mute':
      return h.state.muted ? 'participant-mute' : 'participant-unmute';
    case 'hold':
      return h.state.held ? 'participant-hold' : 'participant-unhold';
    case 'speaker':
      return h.talking ? 'participant-speech-start' : 'participant-speech-stop';
    case 'announcement':
      return h.failed === undefined ? 'announcement-end' : 'announcement-fail';
    default:
      return EVENT_NAME[h.event];
  }
}

/** What happened, as the room reports it. */
export type ConferenceHappening =
  | { event: 'start' | 'modify'; cc: ConferencecallRow }
  /** `state`: the member's mute and hold as it joined (the room watches its call); absent: read when sent */
  | { event: 'join'; cc: ConferencecallRow; state?: PartyState }
  | { event: 'leave'; cc: ConferencecallRow; reason: string }
  | { event: 'mute' | 'hold'; cc: ConferencecallRow; state: PartyState }
  | { event: 'speaker'; cc: ConferencecallRow; talking: boolean }
  /** an AnnounceUrl played to the room (cc null) or to one participant; `failed`: why it was not */
  | { event: 'announcement'; url: string; cc: ConferencecallRow | null; failed?: string }
  | { event: 'end'; reason: string; endingCallId?: string };

export interface ConferenceCallbackDeps {
  db: Knex;
  http: FlowHttp;
  jwtSecret: string;
  logger: Logger;
  timeoutMs: number;
  retryMs?: number;
}

/** Twilio's Timestamp: RFC 2822 in UTC. */
const rfc2822 = (d: Date): string => d.toUTCString().replace('GMT', '+0000');

export class ConferenceCallbacks {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly d: ConferenceCallbackDeps,
    private readonly conferenceId: string,
  ) {}

  /** Queues the callback (if the room asked for it) after those before; never rejects. */
  report(h: ConferenceHappening): Promise<void> {
    const at = new Date();
    this.chain = this.chain.then(() => this.send(h, at)).catch((err: Error) => this.d.logger.warn({ err: err.message, conference: this.conferenceId }, 'conference status callback failed'));
    return this.chain;
  }

  private async send(h: ConferenceHappening, at: Date): Promise<void> {
    const conferences = conferencesRepo(this.d.db);
    const row = await conferences.get(this.conferenceId);
    const cb = row?.status_callback;
    if (!row || !cb || !cb.events.includes(h.event)) return;
    const customer = await customersRepo(this.d.db).get(row.customer_id);
    if (!customer) return;
    const token = twilioAuthToken(this.d.jwtSecret, customer.id, customer.twilio_token_generation);
    const params: Record<string, string> = {
      ConferenceSid: toSid('CF', row.id),
      FriendlyName: row.name,
      AccountSid: accountSid(row.customer_id),
      StatusCallbackEvent: eventName(h),
      Timestamp: rfc2822(at),
      SequenceNumber: String(await conferences.nextCallbackSeq(row.id)),
    };
    if (h.event === 'announcement') {
      params.AnnounceUrl = h.url;
      if (h.cc) params.CallSid = callSid(h.cc.reference_id);
      if (h.failed !== undefined) params.ReasonAnnouncementFailed = h.failed;
    } else if (h.event === 'end') {
      params.ReasonConferenceEnded = h.reason;
      if (h.endingCallId) params.CallSidEndingConference = callSid(h.endingCallId);
    } else {
      Object.assign(params, await this.participant(h.cc), h.event === 'leave' ? { ReasonParticipantLeft: h.reason } : {});
      // a join, a mute or a hold change says the state it stood in, not one read later: a mute just after
      // the join reached the call's row before the join's callback read it (a participant-join Muted=true)
      const stood = h.event === 'mute' || h.event === 'hold' || h.event === 'join' ? h.state : undefined;
      if (stood) Object.assign(params, { Muted: String(stood.muted), Hold: String(stood.held) });
    }
    const sender = {
      http: this.d.http,
      timeoutMs: this.d.timeoutMs,
      retryMs: this.d.retryMs,
      twiml: { logger: this.d.logger },
      callId: h.event === 'end' || h.event === 'announcement' ? (h.event === 'announcement' && h.cc ? h.cc.reference_id : '') : h.cc.reference_id,
    };
    await sendSigned(sender, token, cb.url, cb.method, params, `conference ${params.StatusCallbackEvent}`);
  }

  /** The participant's parameters, its mute and hold read from its call as Participants shows them. */
  private async participant(cc: ConferencecallRow): Promise<Record<string, string>> {
    const call = await callsRepo(this.d.db).get(cc.reference_id);
    const muted = call?.mute_direction === 'in' || call?.mute_direction === 'both';
    const p: Record<string, string> = {
      CallSid: callSid(cc.reference_id),
      Muted: String(muted),
      Hold: String(call?.metadata?.hold === true),
      Coaching: String(Boolean(cc.coach_call_id)),
      EndConferenceOnExit: String(cc.end_on_exit),
      StartConferenceOnEnter: String(cc.start_on_enter),
    };
    if (cc.label) p.ParticipantLabel = cc.label;
    return p;
  }
}
