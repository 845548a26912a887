/**
 * One hosted conference: its confbridge (a ConferenceMix of the media backend, media-app/media-server/
 * conference.ts: the engine's mixer or the switch's conference, N-1 for every member),
 * its participants, its recording and its timeout.
 *
 * Conference:     starting → progressing → terminating → terminated
 * Conferencecall: joining → joined → leaving → leaved
 *
 * A participant stays in the room until it hangs up (or its flow stops), is kicked, is ejected
 * (connect: the other side left) or the conference terminates; then its flow goes on. A connect
 * conference terminates as soon as one side leaves; any conference that is terminating ends
 * (terminated) when its last participant is out. A room made by a name (TwiML, ends_when_empty) ends
 * when its last participant leaves, and any room ends when a participant with end_on_exit leaves.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { Knex } from '../../core/db/knex';
import { clock } from '../../core/clock';
import type { EventPublisher } from '../../core/events/bus';
import type { MuteDirection, RecordingOptions } from '../../core/commands/contracts';
import { conferencesRepo, type ConferenceRow } from '../../core/repos/conferences';
import { conferencecallsRepo, type ConferencecallRow } from '../../core/repos/conferencecalls';
import { timeoutAt } from '../../core/conferences/model';
import { publishConference, publishConferencecall } from '../../core/conferences/events';
import type { CallEndpoint } from '../media-server/endpoint';
import type { AnnounceTarget, ConferenceMix } from '../media-server/conference';
import { traceMix } from '../kit/media-trace';
import type { TwilioRecord } from '../../core/conferences/twilio-recording';
import type { ConferenceHappening, PartyState } from '../twiml/conference-callbacks';
import { RoomRecording } from './room-recording';

/** Why a participant left; `host_lost`: its call is on another node and the hosting node died. */
export type LeaveReason = 'hangup' | 'kicked' | 'ejected' | 'terminated' | 'host_lost';

/** What the room needs of a participant's audio: a call of this node, or a bridge leg from the call's node. */
export interface RoomParty {
  readonly endpoint: CallEndpoint | null;
  readonly isEnded: boolean;
  answer(): Promise<void>;
}

export interface RoomDeps {
  db: Knex;
  events: EventPublisher;
  logger: Logger;
  dataDir: string;
  /** The flow of a recording's on_end_flow_id (reference: the recording). */
  startRecordingFlow(customerId: string, flowId: string, recordingId: string): Promise<void>;
  /** The room is terminated: forget it. */
  ended(room: Room): void;
  /** A status callback's happening (media-app/twiml/conference-callbacks.ts), sent in order. */
  report(h: ConferenceHappening): Promise<void>;
  /** <Conference record>'s recording has started (`done` settles when it has ended): its callbacks. */
  twilioRecording(recordingId: string, record: TwilioRecord, done: Promise<void>): void;
}

/** A call of the hosting node: its mute and hold now, and each change of them (returns the unsubscribe). */
export interface PartyWatch {
  state(): PartyState;
  onChange(fn: () => void): () => void;
}

/** Twilio's ReasonParticipantLeft for why a participant left. */
const LEFT_REASON: Readonly<Record<LeaveReason, string>> = {
  hangup: 'participant_hung_up',
  kicked: 'participant_kicked',
  ejected: 'conference_ended',
  terminated: 'conference_ended',
  host_lost: 'participant_hung_up',
};

interface Member {
  readonly cc: ConferencecallRow;
  readonly call: RoomParty;
  readonly left: Promise<LeaveReason>;
  leave(reason: LeaveReason): void;
  /** the mixer says it is talking (participant-speech-start sent, -stop not yet) */
  talking: boolean;
  /** its participant-join is reported: speech events wait for it */
  joined: boolean;
}

/** setTimeout's ceiling (about 24.8 days): longer timeouts re-arm. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What a Room reports (event name → listener arguments). */
export interface RoomEvents {
  /** the conference ended: its row is terminated and its mixer destroyed */
  terminated: [];
  error: [err: Error];
}

export class Room extends EventEmitter<RoomEvents> {
  private readonly members = new Map<string, Member>();
  private timer: NodeJS.Timeout | null = null;
  private terminating = false;
  private finished = false;
  /** Why the room ends (Twilio's ReasonConferenceEnded) and whose leaving ended it; unset: the API or a timeout. */
  private ending: { reason: string; callId: string } | null = null;
  private readonly recording: RoomRecording;

  constructor(
    public row: ConferenceRow,
    readonly media: ConferenceMix,
    private readonly d: RoomDeps,
  ) {
    super();
    this.on('error', () => undefined);
    this.recording = new RoomRecording(
      {
        id: row.id,
        media,
        finished: () => this.finished,
        closing: () => this.terminating || this.finished,
        publish: (what, p) => this.publish(what, p),
        published: (r) => this.published(r),
      },
      d,
    );
    media.on('speaker', (e) => this.speaker(e.memberId, e.talking));
    // a member is in but may hear a coach it should not (the switch's relate failed): its join goes on
    media.on('coachingFailed', (e) => this.d.logger.warn({ err: e.err.message, conference: this.id, member: e.memberId }, 'a coach could not be kept from a member that entered'));
    // the media server ended the room by itself (the switch's control leg gone, the switch lost): everyone out, terminated
    media.on('destroy', (e) => {
      if (e.reason === 'worker-died') void this.mediaEnded();
    });
    media.on('memberLeft', (e) => this.memberLeft(e.memberId, e.hungUp));
  }

  private async mediaEnded(): Promise<void> {
    if (this.terminating) return;
    this.d.logger.warn({ conference: this.id, members: this.members.size }, 'the media server ended the conference: its participants leave');
    this.ending ??= { reason: 'conference-ended-by-media-server', callId: '' };
    await this.terminate().catch((err: Error) => this.d.logger.error({ err: err.message, conference: this.id }, 'conference end failed'));
  }

  /** A member the media server let go by itself: out of the room as hung up (its channel or call is down), else as kicked (its call goes on). */
  private memberLeft(memberId: string, hungUp: boolean): void {
    const m = [...this.members.values()].find((x) => x.call.endpoint?.uuid === memberId);
    if (m) m.leave(hungUp || m.call.isEnded || m.call.endpoint?.destroyed ? 'hangup' : 'kicked');
  }

  /** The mixer's talk detector: participant-speech-start/-stop for the member of that endpoint, in order with the rest. */
  private speaker(memberId: string, talking: boolean): void {
    const m = [...this.members.values()].find((x) => x.call.endpoint?.uuid === memberId);
    if (!m || m.talking === talking) return;
    m.talking = talking;
    if (m.joined) void this.d.report({ event: 'speaker', cc: m.cc, talking });
  }

  get id(): string {
    return this.row.id;
  }

  get isOver(): boolean {
    return this.finished;
  }

  get size(): number {
    return this.members.size;
  }

  private get conferences() {
    return conferencesRepo(this.d.db);
  }

  private get calls() {
    return conferencecallsRepo(this.d.db);
  }

  private async publish(what: string, p: Promise<unknown>): Promise<void> {
    await p.catch((err: Error) => this.d.logger.warn({ err: err.message, conference: this.id }, `could not publish ${what}`));
  }

  private async published(row: ConferenceRow | null, type: 'conference_updated' = 'conference_updated'): Promise<void> {
    if (!row) return;
    this.row = row;
    await this.publish(type, publishConference(this.d.events, type, row));
  }

  /** PUT changed the row: the timeout is armed again from the new value. */
  async refresh(): Promise<void> {
    const row = await this.conferences.get(this.id);
    if (!row || this.terminating) return;
    this.row = row;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.arm();
  }

  /** Arms the timeout (counted from tm_create, voipbin): the conference then terminates. */
  arm(): void {
    const at = timeoutAt(this.row);
    if (!at || this.terminating) return;
    const wait = Math.max(0, at.getTime() - clock.now().getTime());
    this.timer = setTimeout(() => (wait > MAX_TIMER_MS ? this.arm() : void this.terminate()), Math.min(wait, MAX_TIMER_MS));
    this.timer.unref();
  }

  /**
   * The call is in the room until it leaves; resolves with why. The participant row goes joined on
   * entry and leaved on exit, each change published once.
   */
  async join(call: RoomParty, cc: ConferencecallRow, signal: AbortSignal, watch?: PartyWatch): Promise<LeaveReason> {
    const existing = this.members.get(cc.id);
    if (existing) return existing.left;
    if (this.terminating || this.row.status !== 'progressing') {
      await this.leaved(cc.id);
      return 'terminated';
    }
    const answered = await call.answer().then(
      () => true,
      () => false,
    );
    const ep = call.endpoint;
    if (!answered || !ep || call.isEnded || signal.aborted) {
      await this.leaved(cc.id);
      return 'hangup';
    }
    let resolve!: (r: LeaveReason) => void;
    const left = new Promise<LeaveReason>((r) => (resolve = r));
    let gone = false;
    const m: Member = { cc, call, left, leave: (r) => !gone && ((gone = true), resolve(r)), talking: false, joined: false };
    this.members.set(cc.id, m);
    const onAbort = () => m.leave('hangup');
    signal.addEventListener('abort', onAbort, { once: true });
    const span = traceMix(this.id, cc.id);
    let unwatch = () => {};
    try {
      // a coach enters unheard ('in' muted in the mix), is heard by the coached alone, then speaks: the
      // room never hears it (the mix's unmute leaves the call's own mute, the endpoint's, as it is)
      await this.media.join(ep, cc.coach_call_id ? { mute: 'in' } : {});
      if (cc.coach_call_id) {
        await this.coach(ep, cc.coach_call_id);
        await this.media.mute(ep, 'in', false);
      }
      const t = await this.calls.transition(cc.id, 'joined');
      if (t.changed && t.conferencecall) {
        await this.publish('conferencecall_joined', publishConferencecall(this.d.events, t.conferencecall));
        // the member's mute and hold as it joins, said by its join; each change after, by its own callback
        const state = watch?.state();
        void this.d.report({ event: 'join', cc: t.conferencecall, ...(state ? { state } : {}) });
        m.joined = true;
        if (m.talking) void this.d.report({ event: 'speaker', cc: t.conferencecall, talking: true });
        if (watch && state) unwatch = this.watchParty(t.conferencecall, watch, state);
        if (cc.beep === 'true' || cc.beep === 'onEnter') void this.beep();
      }
      // kicked (leaving) while entering: out again at once
      else m.leave('kicked');
      await this.published(await this.conferences.addCall(this.id, cc.id));
      // the first participant in the mix starts the room: those waiting (start_on_enter false) come in
      if (!this.row.tm_start) {
        const s = await this.conferences.markStarted(this.id);
        if (s.conference) this.row = s.conference;
        if (s.stamped) void this.d.report({ event: 'start', cc });
      }
      void this.recording.twilioRecord();
      if (signal.aborted) m.leave('hangup');
      const reason = await left;
      await this.depart(m, reason);
      span.end(reason);
      return reason;
    } catch (err) {
      span.fail(err);
      await this.depart(m, 'hangup');
      throw err;
    } finally {
      unwatch();
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** participant-mute/-unmute and -hold/-unhold for each change of the member's call, in order with the rest. */
  private watchParty(cc: ConferencecallRow, watch: PartyWatch, joined: PartyState): () => void {
    let last = joined;
    return watch.onChange(() => {
      const now = watch.state();
      if (now.muted !== last.muted) void this.d.report({ event: 'mute', cc, state: now });
      if (now.held !== last.held) void this.d.report({ event: 'hold', cc, state: now });
      last = now;
    });
  }

  /** Out of the mix, leaving → leaved, then what the room does when someone leaves. */
  private async depart(member: Member, reason: LeaveReason): Promise<void> {
    if (!this.members.delete(member.cc.id)) return;
    // one talking as it leaves stops talking first: every speech-start has its speech-stop
    if (member.talking && member.joined) void this.d.report({ event: 'speaker', cc: member.cc, talking: false });
    member.talking = false;
    // end_on_exit and beep as they stand now (REST Participants update may have changed them)
    const fresh = await this.calls.get(member.cc.id).catch(() => null);
    const m = fresh ? { ...member, cc: fresh } : member;
    const ep = m.call.endpoint;
    if (!m.call.isEnded && ep) await this.media.leave(ep).catch(() => undefined);
    const t = await this.calls.transition(m.cc.id, 'leaving');
    if (t.changed && t.conferencecall) await this.publish('conferencecall_leaving', publishConferencecall(this.d.events, t.conferencecall));
    // one never in the mix (its join refused or failed): no participant-leave without its -join, no exit beep
    if (member.joined) {
      void this.d.report({ event: 'leave', cc: m.cc, reason: LEFT_REASON[reason] });
      if ((m.cc.beep === 'true' || m.cc.beep === 'onExit') && !this.terminating) void this.beep();
    }
    await this.leaved(m.cc.id);
    const kicked = reason === 'kicked';
    // end_on_exit is a participant's: one that never joined (a refused coach) ends nobody's room; a connect
    // room (two parties) ends when either side is gone, joined or not
    if (this.row.type === 'connect' || (member.joined && m.cc.end_on_exit)) {
      this.ending ??= { reason: `participant-with-end-conference-on-exit-${kicked ? 'kicked' : 'left'}`, callId: m.cc.reference_id };
      await this.terminate();
    } else if (this.row.ends_when_empty && this.members.size === 0 && !(await this.someoneJoining())) {
      this.ending ??= { reason: kicked ? 'last-participant-kicked' : 'last-participant-left', callId: m.cc.reference_id };
      await this.terminate();
    }
    if (this.terminating && this.members.size === 0) await this.finish();
  }

  /** A participant on its way in (conference_join done, confbridge_join not yet): a room made by a name waits for it. */
  private async someoneJoining(): Promise<boolean> {
    return (await this.calls.presentIn(this.row.customer_id, this.id)).length > 0;
  }

  /** The participant is out (any earlier state); published once. */
  private async leaved(ccId: string): Promise<void> {
    const t = await this.calls.transition(ccId, 'leaved');
    if (!t.changed || !t.conferencecall) return;
    await this.publish('conferencecall_leaved', publishConferencecall(this.d.events, t.conferencecall));
    await this.published(await this.conferences.removeCall(this.id, ccId));
  }

  /** DELETE /conferencecalls: a member leaves; one not in the room yet (pre-flow) is marked leaved. */
  async kick(ccId: string): Promise<void> {
    const m = this.members.get(ccId);
    if (m) return m.leave('kicked');
    await this.leaved(ccId);
    // a room made by a name whose only caller hung up before getting in: nobody is left
    if (this.row.ends_when_empty && this.members.size === 0 && !(await this.someoneJoining())) await this.terminate();
  }

  async mute(ccId: string, direction: MuteDirection, on: boolean): Promise<void> {
    const ep = this.members.get(ccId)?.call.endpoint;
    if (!ep) return;
    await this.media.mute(ep, direction, on);
  }

  /** AnnounceUrl's audience: every member in the mix (`ccId` null) or that one, as they stand when asked, as the mix plays to them. */
  audience(ccId: string | null): () => AnnounceTarget[] {
    return () => {
      const ms = ccId ? [this.members.get(ccId)].filter((m) => m !== undefined) : [...this.members.values()];
      return ms.filter((m) => m.joined && !m.call.isEnded).flatMap((m) => (m.call.endpoint ? [this.media.announceTo(m.call.endpoint)] : []));
    };
  }

  /** The participant's row while it is in the mix, else null. */
  memberRow(ccId: string): ConferencecallRow | null {
    const m = this.members.get(ccId);
    return m?.joined ? m.cc : null;
  }

  /** announcement-end, or announcement-fail with `failed`, in order with the room's other callbacks. */
  announced(url: string, cc: ConferencecallRow | null, failed: string | null): void {
    void this.d.report({ event: 'announcement', url, cc, ...(failed !== null ? { failed } : {}) });
  }

  /** REST Participants update changed the member's row: participant-modify with it as it now stands. */
  async modified(ccId: string): Promise<void> {
    const m = this.members.get(ccId);
    const row = m?.joined ? await this.calls.get(ccId) : null;
    if (row) void this.d.report({ event: 'modify', cc: row });
  }

  /** REST Participants Coaching: the member's coach_call_id as it now stands (null: heard by all again). */
  async recoach(ccId: string): Promise<void> {
    const ep = this.members.get(ccId)?.call.endpoint;
    const row = await this.calls.get(ccId);
    if (!ep || !row) return;
    if (row.coach_call_id) await this.coach(ep, row.coach_call_id);
    else await this.media.coach(ep, null);
  }

  /** TwiML coach: only the participant of that call hears this one (the mix's coach); one not in the room: noted, heard by all. */
  private async coach(ep: CallEndpoint, callId: string): Promise<void> {
    const target = [...this.members.values()].find((x) => x.cc.reference_id === callId)?.call.endpoint;
    if (!target) {
      this.d.logger.info({ conference: this.id, coached: callId }, 'the coached call is not in the room: the coach is heard by all');
      return;
    }
    await this.media.coach(ep, target);
  }

  /** TwiML beep: a short tone every member hears (the mix's beep: conference.ts); never rejects. */
  private async beep(): Promise<void> {
    try {
      await this.media.beep();
    } catch (err) {
      this.d.logger.info({ err: (err as Error).message, conference: this.id }, 'conference beep not played');
    }
  }

  /** DELETE, timeout, or a connect conference losing a side: terminating, everyone out, terminated. */
  async terminate(): Promise<void> {
    if (this.terminating) return;
    this.terminating = true;
    if (this.timer) clearTimeout(this.timer);
    const t = await this.conferences.transition(this.id, 'terminating');
    if (t.changed) await this.published(t.conference);
    for (const m of this.members.values()) m.leave(this.row.type === 'connect' ? 'ejected' : 'terminated');
    if (this.members.size === 0) await this.finish();
  }

  private async finish(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    await this.recordingStop();
    const t = await this.conferences.transition(this.id, 'terminated');
    if (t.changed) await this.published(t.conference);
    if (t.changed) void this.d.report({ event: 'end', reason: this.ending?.reason ?? 'conference-ended-via-api', endingCallId: this.ending?.callId });
    await this.media.destroy().catch(() => undefined);
    this.d.ended(this);
    this.emit('terminated');
  }

  // ---- recording (room-recording.ts): the whole mix into one WAV

  recordingStart(recordingId: string, options: RecordingOptions): Promise<void> {
    return this.recording.start(recordingId, options);
  }

  /** Stops the active recording (idempotent); resolves when its row says ended. */
  recordingStop(): Promise<void> {
    return this.recording.stop();
  }

  /** Node shutdown: the recording is closed properly; members leave as their calls hang up. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await this.recordingStop();
  }
}
